/**
 * A small ONNX graph writer: the protobuf wire format of onnx.proto's ModelProto written by hand
 * (only the fields a graph of standard operators needs), so tests and benchmarks build models
 * without Python or a download. Field numbers are onnx.proto's: ModelProto ir_version 1, graph 7,
 * opset_import 8; GraphProto node 1, name 2, initializer 5, input 11, output 12; NodeProto input 1,
 * output 2, name 3, op_type 4, attribute 5; AttributeProto name 1, f 2, i 3, t 5, ints 8, type 20;
 * TensorProto dims 1, data_type 2, name 8, raw_data 9; ValueInfoProto name 1, type 2; TypeProto
 * tensor_type 1 (elem_type 1, shape 2: dim 1, each dim_value 1 or dim_param 2).
 */

/** TensorProto.DataType values used here. */
export const FLOAT = 1;
export const INT64 = 7;

function varint(v: bigint): number[] {
  let x = BigInt.asUintN(64, v);
  const out: number[] = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x !== 0n) b |= 0x80;
    out.push(b);
  } while (x !== 0n);
  return out;
}

/** One encoded message: a list of byte chunks, concatenated at the end. */
class Msg {
  readonly parts: Uint8Array[] = [];
  int(field: number, v: number | bigint): this {
    this.parts.push(Uint8Array.from([...varint(BigInt(field << 3)), ...varint(BigInt(v))]));
    return this;
  }
  float(field: number, v: number): this {
    const b = new Uint8Array(5);
    b[0] = (field << 3) | 5;
    new DataView(b.buffer).setFloat32(1, v, true);
    this.parts.push(b);
    return this;
  }
  bytes(field: number, data: Uint8Array): this {
    this.parts.push(
      Uint8Array.from([...varint(BigInt((field << 3) | 2)), ...varint(BigInt(data.length))]),
    );
    this.parts.push(data);
    return this;
  }
  str(field: number, s: string): this {
    return this.bytes(field, new TextEncoder().encode(s));
  }
  msg(field: number, m: Msg): this {
    return this.bytes(field, m.encode());
  }
  encode(): Uint8Array {
    const n = this.parts.reduce((s, p) => s + p.length, 0);
    const out = new Uint8Array(n);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

export type Dim = number | string;
export type Attr = number | number[] | { float: number };

export interface Tensor {
  name: string;
  type: typeof FLOAT | typeof INT64;
  dims: number[];
  data: Float32Array | BigInt64Array;
}

function tensorMsg(t: Tensor): Msg {
  const m = new Msg();
  for (const d of t.dims) m.int(1, d);
  m.int(2, t.type);
  m.str(8, t.name);
  m.bytes(9, new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  return m;
}

function valueInfo(name: string, elem: number, shape: readonly Dim[]): Msg {
  const dims = new Msg();
  for (const d of shape)
    dims.msg(1, typeof d === 'number' ? new Msg().int(1, d) : new Msg().str(2, d));
  const tensorType = new Msg().int(1, elem).msg(2, dims);
  return new Msg().str(1, name).msg(2, new Msg().msg(1, tensorType));
}

/** Builds a graph node by node; `write()` returns the model's bytes. */
export class GraphBuilder {
  readonly #nodes: Msg[] = [];
  readonly #inits: Msg[] = [];
  readonly #inputs: Msg[] = [];
  readonly #outputs: Msg[] = [];
  #n = 0;

  input(name: string, elem: number, shape: readonly Dim[]): string {
    this.#inputs.push(valueInfo(name, elem, shape));
    return name;
  }

  output(name: string, elem: number, shape: readonly Dim[]): void {
    this.#outputs.push(valueInfo(name, elem, shape));
  }

  /** A constant (an initializer); returns its name. */
  init(
    name: string,
    type: Tensor['type'],
    dims: number[],
    data: Float32Array | BigInt64Array,
  ): string {
    this.#inits.push(tensorMsg({ name, type, dims, data }));
    return name;
  }

  floats(name: string, dims: number[], data: ArrayLike<number>): string {
    return this.init(name, FLOAT, dims, Float32Array.from(data));
  }

  ints(name: string, dims: number[], data: ArrayLike<number>): string {
    return this.init(name, INT64, dims, BigInt64Array.from(Array.from(data, (x) => BigInt(x))));
  }

  /** Adds `op(inputs) → output` and returns the output's name (`out`, or a fresh one). */
  op(
    type: string,
    inputs: readonly string[],
    attrs: Record<string, Attr> = {},
    out?: string,
  ): string {
    const name = out ?? `${type.toLowerCase()}_${this.#n++}`;
    const node = new Msg();
    for (const i of inputs) node.str(1, i);
    node.str(2, name).str(3, `${name}_node`).str(4, type);
    for (const [k, v] of Object.entries(attrs)) {
      const a = new Msg().str(1, k);
      if (typeof v === 'number') a.int(3, v).int(20, 2);
      else if (Array.isArray(v)) {
        for (const x of v) a.int(8, x);
        a.int(20, 7);
      } else a.float(2, v.float).int(20, 1);
      node.msg(5, a);
    }
    this.#nodes.push(node);
    return name;
  }

  write(opset = 17): Uint8Array {
    const graph = new Msg();
    for (const n of this.#nodes) graph.msg(1, n);
    graph.str(2, 'flashbulb_test_graph');
    for (const t of this.#inits) graph.msg(5, t);
    for (const i of this.#inputs) graph.msg(11, i);
    for (const o of this.#outputs) graph.msg(12, o);
    return new Msg()
      .int(1, 8)
      .str(2, 'flashbulb-test')
      .msg(7, graph)
      .msg(8, new Msg().str(1, '').int(2, opset))
      .encode();
  }
}
