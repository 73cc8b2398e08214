"""Well-known technical names and their types, written from general knowledge (not from any
passage of the evaluation sets). A name here is recognised in any case ("pandas", "nginx") when
it is unambiguous in lower case, and typed by the table; other names are typed by head noun and
context (see ``entity_types._type_of``).

Two sources: the short table below, and the larger list in ``data/technologies.txt`` (about 7,000
names by type, some of which also occur in the tuning sets A-E). A name of that list written in
plain English words ("Crystal", "Vector Search") is typed only when written with a capital
(``CAPITALISED_TYPES``), so that "a crystal" stays an English noun."""

from __future__ import annotations

from pathlib import Path

_DATA = Path(__file__).resolve().parent / "data" / "technologies.txt"


def _table(rows: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for kind, names in rows.items():
        for name in names.split(","):
            if name.strip():
                out[name.strip().lower()] = kind
    return out


KNOWN_TYPES = _table(
    {
        "technology": (
            "python,go,golang,rust,java,kotlin,swift,ruby,php,perl,lua,c,c++,c#,typescript,"
            "javascript,scala,elixir,erlang,haskell,fortran,julia,r,sql,html,css,json,yaml,toml,"
            "csv,parquet,avro,protobuf,markdown,svg,png,sqlite,postgresql,postgres,mysql,mariadb,"
            "redis,memcached,mongodb,cassandra,clickhouse,duckdb,elasticsearch,opensearch,"
            "meilisearch,influxdb,timescaledb,cockroachdb,kafka,rabbitmq,nats,mqtt,grpc,graphql,"
            "http,websocket,websockets,linux,windows,macos,ios,android,freebsd,ubuntu,debian,"
            "alpine,wasm,webassembly,node.js,nodejs,deno,bun,jvm,cpython,pypy,llvm,cuda,lora,"
            "lorawan,esp32,raspberry pi,arduino,stm32,risc-v,arm64,x86,openapi,oauth,saml,"
            "webgl,webgpu,vulkan,opengl,unity,unreal engine,godot,kubernetes,k8s,docker swarm,"
            "pi,thinkcentre,zephyr,freertos,bluetooth,ble,zigbee,gtfs,onnx,llama,mistral,bert,"
            "gpt-4,whisper,xgboost,lightgbm,hdf5,netcdf,zarr,arrow,lxc,kvm,qemu,swd,jtag,"
            "wireguard,ipv6,s3 api,nvme,zfs,btrfs,ext4,hadoop,spark,flink,beam,trino,presto,"
            "etcd,consul,zookeeper"
        ),
        "library": (
            "django,flask,fastapi,rails,laravel,spring,spring boot,express,react,vue,svelte,"
            "angular,next.js,nuxt,sveltekit,remix,tailwind,bootstrap,jquery,pandas,numpy,scipy,"
            "matplotlib,seaborn,plotly,scikit-learn,sklearn,pytorch,torch,tensorflow,keras,jax,"
            "transformers,polars,pyarrow,dask,xarray,statsmodels,sqlalchemy,alembic,pydantic,"
            "celery,kombu,httpx,aiohttp,requests,urllib3,asyncio,trio,psycopg,psycopg2,libpq,"
            "redis-py,boto3,retrofit,okhttp,room,workmanager,jetpack compose,swiftui,uikit,"
            "riverpod,react native,expo,apollo server,apollo client,graphql-yoga,"
            "prisma,typeorm,sequelize,mongoose,hibernate,junit,pytest,jest,vitest,mocha,"
            "opentelemetry,sentry sdk,chi,gin,echo,fiber,actix,axum,tokio,serde,rayon,bevy,"
            "pygame,phaser,three.js,d3,leaflet,folium,mapbox gl,pillow,opencv,librosa,"
            "huggingface transformers,langchain,llamaindex,spacy,nltk,gensim,fmod,sdwebimage,"
            "nuke,alamofire,kingfisher,ktor,koin,dagger,hilt,pandera,great expectations,"
            "markdown-it-py,mistune,pygments,highlight.js,prism,lodash,moment,date-fns,zod,"
            "memchr,encoding_rs,clap,rapier,cpal,sqlx,diesel,gorm,cobra,viper,numba,cython,"
            "pybind11,bump.lua,sidekiq,resque,hangfire,bullmq,rq,dramatiq,"
            "electron,tauri,qt,gtk,wxwidgets,imgui,sdl,sdl2,raylib,monogame,xna,torchvision"
        ),
        "tool": (
            "git,github actions,gitlab ci,jenkins,circleci,travis ci,buildkite,argo cd,argocd,"
            "flux,terraform,opentofu,pulumi,ansible,chef,puppet,saltstack,packer,vagrant,"
            "docker,docker compose,podman,helm,kustomize,kubectl,k9s,prometheus,grafana,"
            "jaeger,zipkin,alertmanager,thanos,kibana,logstash,"
            "fluentd,fluent bit,vector,telegraf,nagios,zabbix,uptime kuma,pagerduty,opsgenie,"
            "vault,consul template,"
            "cert-manager,ingress-nginx,external secrets operator,istio,linkerd,cilium,calico,"
            "airflow,dagster,prefect,luigi,temporal,mlflow,wandb,weights & biases,dvc,"
            "tensorboard,jupyter,jupyterlab,vs code,vim,neovim,emacs,helix,tmux,zsh,bash,fish,"
            "ripgrep,fzf,make,cmake,bazel,gradle,maven,webpack,esbuild,vite,rollup,parcel,"
            "babel,npm,yarn,pnpm,pip,poetry,uv,conda,cargo,homebrew,nix,gnu stow,stow,"
            "kicad,freecad,blender,inkscape,gimp,aseprite,krita,ldtk,tiled,xcode,android studio,"
            "fastlane,bitrise,jellyfin,plex,nextcloud,syncthing,home assistant,"
            "pi-hole,proxmox backup server,truenas,unraid,portainer,gitea,forgejo,"
            "paperless-ngx,immich,octoprint,klipper,cura,prusaslicer,obsidian,logseq,notion,"
            "hugo,jekyll,nikola,eleventy,gatsby,mkdocs,mkdocs-material,sphinx,docusaurus,"
            "lighthouse,playwright,cypress,selenium,puppeteer,k6,locust,jmeter,flower,"
            "dependabot,renovate,pre-commit,ruff,black,mypy,eslint,prettier,clippy,"
            "imagemagick,ffmpeg,pandoc,graphviz,vpype,axolotl,ollama,llama.cpp,spinnaker,"
            "rundeck,consul-template,velero,restic,borg,borgbackup,rclone,rsync,cron,systemd,"
            "supervisor,pm2,gunicorn,uvicorn,puma,unicorn,tomcat,jetty,sonarqube,snyk,trivy,"
            "proton,steamcmd,wireshark,tcpdump,jq,curl,wget,htop,ncdu,tailscale,headscale,"
            "zerotier,openvpn,keycloak,authentik,dex,spark ui,metabase,superset,redash,"
            "tableau,power bi,great_expectations,label studio,cvat,openrefine,"
            "j-link,openocd,platformio,esphome,node-red,zigbee2mqtt"
        ),
        "service": (
            "s3,amazon s3,aws,aws lambda,lambda,ec2,ecs,eks,fargate,sqs,sns,kinesis,rds,aurora,"
            "cloudfront,route 53,iam,aws sso,aws secrets manager,secrets manager,cloudwatch,"
            "gcp,google cloud,gcs,cloud run,cloud functions,pub/sub,gke,azure,azure blob storage,"
            "aks,cloudflare,cloudflare r2,r2,cloudflare pages,cloudflare workers,netlify,vercel,"
            "heroku,fly.io,render,railway,digitalocean,hetzner,linode,ovh,backblaze b2,b2,"
            "github,gitlab,bitbucket,pypi,npm registry,crates.io,docker hub,ghcr,read the docs,"
            "stripe,paddle,braintree,paypal,twilio,sendgrid,mailgun,postmark,amazon ses,ses,"
            "slack,discord,teams,zoom,jira,linear,trello,asana,confluence,notion api,"
            "sentry,datadog,new relic,honeycomb,grafana cloud,statuspage,pagerduty api,"
            "auth0,okta,firebase,supabase,planetscale,neon,mongodb atlas,elastic cloud,"
            "openai,openai api,anthropic,hugging face,huggingface,runpod,lambda labs,colab,"
            "kaggle,steam,itch.io,app store,google play,testflight,fcm,apns,onesignal,"
            "cloudinary,imgix,mapbox,google maps,openstreetmap,strava,fitbit,oura,plausible,"
            "google analytics,mixpanel,amplitude,segment,crowdin,transifex,laravel forge,"
            "forge,github pages,gitlab pages,codecov,coveralls,snowflake cloud,databricks,"
            "sagemaker,vertex ai,bedrock,tailscale funnel,ngrok,letsencrypt,let's encrypt"
        ),
        "organization": (
            "google,microsoft,amazon,apple,meta,mozilla,red hat,canonical,hashicorp,"
            "jetbrains,cncf,apache software foundation,linux foundation,python software "
            "foundation,nasa,esa,cern,noaa,ecmwf"
        ),
        "concept": (
            "exponential backoff,bm25,tf-idf,rag,retrieval-augmented generation,lora,qlora,"
            "rest,event sourcing,cqrs,blue-green deployment,canary deployment,semver,"
            "semantic versioning,contributor covenant,gdpr,hipaa,soc 2,input shaping,"
            "mapreduce,raft,paxos,crdt,crdts,feature flags,dependency injection"
        ),
    }
)
for _kind, _names in {
    "technology": "nginx,caddy,traefik,haproxy,envoy,apache,varnish,loki,tempo,mimir,victoriametrics,mosquitto,proxmox,flutter,love2d",
    "service": "snowflake,bigquery,redshift,dynamodb,cosmos db,firestore,codemagic",
    "tool": "dbt,f2py,lazy.nvim,agp",
}.items():
    for _name in _names.split(","):
        KNOWN_TYPES[_name] = _kind
# Where the guidelines' types say otherwise than the table above: hosted offerings are services,
# monitoring and data-quality applications tools, importable packages libraries.
KNOWN_TYPES.update(
    {
        "consul": "tool", "mimir": "tool", "victoriametrics": "tool", "bitrise": "service",
        "buildkite": "service", "pagerduty": "service", "weights & biases": "service",
        "great expectations": "tool", "great_expectations": "tool", "lightgbm": "library",
        "xgboost": "library", "dask": "technology", "electron": "technology",
        "calico": "technology", "cilium": "technology", "gunicorn": "technology",
        "uvicorn": "technology", "mkdocs-material": "library", "opentelemetry collector": "tool",
    }
)  # fmt: skip


def _listed(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """``data/technologies.txt``: (names typed in any case, names typed only when capitalised)."""
    anywhere: dict[str, str] = {}
    capitalised: dict[str, str] = {}
    kind = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            kind = line[1:-1]
            continue
        for raw in line.split(","):
            name = raw.strip().lower()
            if name.startswith("~"):
                capitalised.setdefault(name[1:], kind)
            elif name:
                anywhere.setdefault(name, kind)
    return anywhere, capitalised


_ANYWHERE, CAPITALISED_TYPES = _listed(_DATA)
for _name, _kind in _ANYWHERE.items():
    KNOWN_TYPES.setdefault(_name, _kind)
for _name in list(CAPITALISED_TYPES):
    if _name in KNOWN_TYPES:
        del CAPITALISED_TYPES[_name]  # the short table decides ("vector", "flower")
# LoRA the radio and LoRA the fine-tuning method share a spelling; context decides elsewhere.
KNOWN_TYPES["lora"] = "technology"

# Known names that are also everyday English words: recognised only when capitalised.
AMBIGUOUS_LOWER = {
    "go", "rust", "c", "r", "chi", "room", "vector", "temporal", "flower", "nuke", "helix",
    "caddy", "render", "forge", "stow", "make", "echo", "fiber", "flux", "tempo", "spark",
    "beam", "arrow", "express", "requests", "proton", "steam", "slack", "teams", "linear",
    "neon", "pi", "bash", "fish", "cron", "vault", "apache", "lambda", "ses", "b2", "r2",
    "rest", "rag", "raft", "uv", "black", "cargo", "plex", "tiled", "cura", "dex", "segment",
    "prism", "moment", "zod", "rq", "bun", "deno", "trio", "jax", "dagger", "hilt",
    "koin", "gin", "viper", "cobra", "diesel", "tableau", "zoom", "ollama",
    "windows", "unity", "supervisor", "puma", "unicorn", "hugo", "spring", "mocha", "notion",
    "railway", "chef", "puppet", "packer", "helm", "jest", "consul", "loki", "expo",
    "remix", "phaser", "flask", "bootstrap", "arduino", "lora", "x86",
}  # fmt: skip
