/**
 * POST /v1/upload (DESIGN.md 10; spec 4.5): multipart/form-data sent the way curl -F would, with
 * fetch + FormData and Blob parts whose filenames are relative paths. Each .md/.txt file becomes a
 * document memory plus proposition memories linked proposition_of → document; the entity comes
 * from front matter or an entities/<name>/ path; has_entity and entity_relation link statements
 * to the entities they name, across files and requests; re-uploading replaces what changed; one
 * bad file rejects the whole request and stores nothing. Hash embedder; background reflection and
 * contradiction checks are off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const QUIET = { FLASHBULB_REFLECT_ENABLED: 'false', FLASHBULB_CONTRADICTIONS_ENABLED: 'false' };
const HEX32 = /^[0-9a-f]{32}$/;

const ACME = [
  '# Acme',
  '',
  'Acme Corporation builds rockets in Texas. The company was founded in 1999.',
  '',
  '- Acme employs four hundred engineers',
  '',
].join('\n');
const MEETING = [
  '---',
  'entity_id: bob',
  'title: weekly sync',
  '---',
  '# Weekly sync',
  '',
  'Bob met the Acme team on Monday. They reviewed the launch schedule.',
  '',
  '## Budget',
  '- approved for next quarter',
  '',
].join('\n');
const README = 'Flashbulb stores memories for agents. It answers recall queries quickly.\n';

let t: TestApp;
let seq = 0;

type File = [path: string, content: string | Buffer];
interface Ws {
  slug: string;
  key: string;
  req: (method: string, path: string, opts?: { body?: unknown }) => ReturnType<TestApp['req']>;
  upload: (
    files: File[],
    opts?: { path?: string; key?: string },
  ) => Promise<{ status: number; body: any; text: string }>;
  all: () => Promise<any[]>;
  edges: (id: string) => Promise<{ outgoing: any[]; incoming: any[] }>;
}

async function fresh(): Promise<Ws> {
  const slug = `up-${process.pid}-${++seq}`;
  const created = await t.req('POST', '/v1/workspaces', { body: { slug } });
  expect(created.status, created.text).toBe(201);
  const key = created.body.api_key as string;
  const ws: Ws = {
    slug,
    key,
    req: (method, path, opts = {}) => t.req(method, path, { ...opts, key }),
    upload: async (files, opts = {}) => {
      const form = new FormData();
      for (const [path, content] of files) form.append('files', new Blob([content]), path);
      const res = await fetch(`${t.base}${opts.path ?? '/v1/upload'}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${opts.key ?? key}` },
        body: form,
      });
      const text = await res.text();
      let body: any = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      return { status: res.status, body, text };
    },
    all: async () => {
      const res = await ws.req('GET', '/v1/memories?limit=1000');
      expect(res.status).toBe(200);
      expect(res.body.next_cursor).toBeNull();
      return res.body.memories;
    },
    edges: async (id) => {
      const res = await ws.req('GET', `/v1/memories/${id}/edges`);
      expect(res.status, res.text).toBe(200);
      return res.body;
    },
  };
  return ws;
}

async function uploadOk(ws: Ws, files: File[], path?: string): Promise<any> {
  const res = await ws.upload(files, path === undefined ? {} : { path });
  expect(res.status, res.text).toBe(200);
  expect(Object.keys(res.body).sort()).toEqual(['files', 'uploaded']);
  expect(res.body.uploaded).toBe(files.length);
  expect(res.body.files.map((f: any) => f.file_path)).toEqual(files.map(([p]) => p));
  for (const f of res.body.files) {
    expect(f.document_id).toMatch(HEX32);
    expect(Number.isInteger(f.propositions)).toBe(true);
  }
  return res.body;
}

/** The propositions of a document: memories with a proposition_of edge to it. */
async function propositionsOf(ws: Ws, docId: string): Promise<any[]> {
  const e = await ws.edges(docId);
  const ids = e.incoming.filter((x) => x.edge_type === 'proposition_of').map((x) => x.source_id);
  const res = await ws.req('POST', '/v1/memories/batch', { body: { memory_ids: ids } });
  expect(res.status).toBe(200);
  return res.body;
}

beforeAll(async () => {
  t = await startTestApp({}, QUIET);
});
afterAll(async () => t.stop());

describe('POST /v1/upload', () => {
  it('stores one document per file and one proposition per statement, linked proposition_of → document', async () => {
    const ws = await fresh();
    const out = await uploadOk(ws, [
      ['entities/acme/profile.md', ACME],
      ['notes/2024/meeting.md', MEETING],
      ['readme.txt', README],
    ]);
    expect(out.files.map((f: any) => f.status)).toEqual(['created', 'created', 'created']);
    expect(out.files.map((f: any) => f.propositions)).toEqual([3, 3, 2]);
    const [acme, meeting, readme] = out.files.map((f: any) => f.document_id);
    expect(new Set([acme, meeting, readme]).size).toBe(3);

    const all = await ws.all();
    const docs = all.filter((m) => m.kind === 'document');
    const props = all.filter((m) => m.kind === 'proposition');
    expect(docs).toHaveLength(3);
    expect(props).toHaveLength(8);
    expect(all).toHaveLength(11);

    const doc = (id: string): any => docs.find((d) => d.memory_id === id);
    expect(doc(acme)).toMatchObject({
      kind: 'document',
      entity_id: 'acme',
      context: { file_path: 'entities/acme/profile.md' },
    });
    expect(doc(meeting)).toMatchObject({
      entity_id: 'bob',
      context: { file_path: 'notes/2024/meeting.md' },
    });
    expect(doc(readme)).toMatchObject({ entity_id: null, context: { file_path: 'readme.txt' } });
    for (const d of docs) {
      expect(Object.keys(d.context).sort()).toEqual(['content_hash', 'file_path']);
      expect(d.context.content_hash).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(doc(acme).content).toContain('Acme Corporation builds rockets in Texas.');
    expect(doc(readme).content).toContain('It answers recall queries quickly.');

    const byDoc = new Map<string, string[]>();
    for (const [docId, n] of [
      [acme, 3],
      [meeting, 3],
      [readme, 2],
    ] as const) {
      const ps = await propositionsOf(ws, docId);
      expect(ps).toHaveLength(n);
      for (const p of ps) {
        expect(p.kind).toBe('proposition');
        expect(p.entity_id).toBe(doc(docId).entity_id);
        expect(p.context.file_path).toBe(doc(docId).context.file_path);
        const pe = await ws.edges(p.memory_id);
        expect(
          pe.outgoing
            .filter((e: any) => e.edge_type === 'proposition_of')
            .map((e: any) => e.target_id),
        ).toEqual([docId]);
      }
      byDoc.set(
        docId,
        ps.map((p) => p.content),
      );
    }
    expect(byDoc.get(acme)).toEqual(
      expect.arrayContaining([
        'Acme Corporation builds rockets in Texas.',
        'The company was founded in 1999.',
      ]),
    );
    expect(byDoc.get(acme)?.some((c) => c.includes('Acme employs four hundred engineers'))).toBe(
      true,
    );
    expect(byDoc.get(meeting)).toEqual(
      expect.arrayContaining([
        'Bob met the Acme team on Monday.',
        'They reviewed the launch schedule.',
      ]),
    );
    // A list item that is only a fragment carries its heading, so it stands on its own.
    const budget = byDoc.get(meeting)?.find((c) => c.includes('approved for next quarter'));
    expect(budget).toContain('Budget');
    expect(new Set(byDoc.get(readme))).toEqual(
      new Set(['Flashbulb stores memories for agents.', 'It answers recall queries quickly.']),
    );
  });

  it('has_entity links a statement to the document of the entity it names; entity_relation links it to that entity’s statements', async () => {
    const ws = await fresh();
    const out = await uploadOk(ws, [
      ['entities/acme/profile.md', ACME],
      ['notes/2024/meeting.md', MEETING],
      ['readme.txt', README],
    ]);
    const [acmeDoc, , readmeDoc] = out.files.map((f: any) => f.document_id);
    const all = await ws.all();
    const bobProp = all.find((m) => m.content === 'Bob met the Acme team on Monday.');
    expect(bobProp).toBeDefined();
    const e = await ws.edges(bobProp.memory_id);
    expect(
      e.outgoing.filter((x: any) => x.edge_type === 'has_entity').map((x: any) => x.target_id),
    ).toEqual([acmeDoc]);
    const acmeProps = new Set(
      (await propositionsOf(ws, acmeDoc))
        .filter((p) => /acme/i.test(p.content))
        .map((p) => p.memory_id),
    );
    const related = [...e.outgoing, ...e.incoming]
      .filter((x: any) => x.edge_type === 'entity_relation')
      .map((x: any) => (x.source_id === bobProp.memory_id ? x.target_id : x.source_id));
    expect(
      related.some((id: string) => acmeProps.has(id)),
      'linked to a statement of acme',
    ).toBe(true);
    // Statements that name no entity get neither kind of edge.
    for (const p of await propositionsOf(ws, readmeDoc)) {
      const pe = await ws.edges(p.memory_id);
      expect([...pe.outgoing, ...pe.incoming].map((x: any) => x.edge_type)).toEqual([
        'proposition_of',
      ]);
    }
  });

  it('links across requests: a later file naming an entity is linked to that entity’s earlier document', async () => {
    const ws = await fresh();
    const first = await uploadOk(ws, [['entities/acme/profile.md', ACME]]);
    const acmeDoc = first.files[0].document_id;
    await uploadOk(ws, [['notes/call.md', 'Carol called ACME about the delayed engine.\n']]);
    const carol = (await ws.all()).find(
      (m) =>
        m.kind === 'proposition' && m.content === 'Carol called ACME about the delayed engine.',
    );
    expect(carol).toMatchObject({ kind: 'proposition', entity_id: null });
    const e = await ws.edges(carol.memory_id);
    expect(
      e.outgoing.filter((x: any) => x.edge_type === 'has_entity').map((x: any) => x.target_id),
    ).toEqual([acmeDoc]);
    const acmeProps = new Set((await propositionsOf(ws, acmeDoc)).map((p) => p.memory_id));
    const related = [...e.outgoing, ...e.incoming].filter(
      (x: any) => x.edge_type === 'entity_relation',
    );
    expect(related.length).toBeGreaterThan(0);
    for (const x of related)
      expect(acmeProps.has(x.source_id === carol.memory_id ? x.target_id : x.source_id)).toBe(true);
  });

  it('re-uploading an unchanged file changes nothing', async () => {
    const ws = await fresh();
    const first = await uploadOk(ws, [
      ['entities/acme/profile.md', ACME],
      ['readme.txt', README],
    ]);
    const before = await ws.all();
    const edgesBefore = await ws.edges(first.files[0].document_id);
    const again = await uploadOk(ws, [
      ['entities/acme/profile.md', ACME],
      ['readme.txt', README],
    ]);
    expect(again.files).toEqual(first.files.map((f: any) => ({ ...f, status: 'unchanged' })));
    const after = await ws.all();
    expect(after.map((m: any) => m.memory_id)).toEqual(before.map((m: any) => m.memory_id));
    expect(after.map((m: any) => [m.content, m.updated_at, m.logical_clock])).toEqual(
      before.map((m: any) => [m.content, m.updated_at, m.logical_clock]),
    );
    expect(await ws.edges(first.files[0].document_id)).toEqual(edgesBefore);
  });

  it('re-uploading a changed file keeps the document id, keeps unchanged statements, drops removed ones and adds new ones', async () => {
    const ws = await fresh();
    const v1 = 'Alpha launches in May. Beta follows in June. Gamma is cancelled.\n';
    const v2 = 'Alpha launches in May. Beta slips to July. Delta is added.\n';
    const first = await uploadOk(ws, [['plans/roadmap.md', v1]]);
    const docId = first.files[0].document_id;
    const oldProps = await propositionsOf(ws, docId);
    expect(oldProps.map((p) => p.content).sort()).toEqual([
      'Alpha launches in May.',
      'Beta follows in June.',
      'Gamma is cancelled.',
    ]);
    const oldDoc = (await ws.req('GET', `/v1/memories/${docId}`)).body;

    const second = await uploadOk(ws, [['plans/roadmap.md', v2]]);
    expect(second.files).toEqual([
      { file_path: 'plans/roadmap.md', document_id: docId, propositions: 3, status: 'updated' },
    ]);
    const doc = (await ws.req('GET', `/v1/memories/${docId}`)).body;
    expect(doc.kind).toBe('document');
    expect(doc.content).toContain('Delta is added.');
    expect(doc.content).not.toContain('Gamma');
    expect(doc.context.file_path).toBe('plans/roadmap.md');
    expect(doc.context.content_hash).not.toBe(oldDoc.context.content_hash);

    const newProps = await propositionsOf(ws, docId);
    expect(newProps.map((p) => p.content).sort()).toEqual([
      'Alpha launches in May.',
      'Beta slips to July.',
      'Delta is added.',
    ]);
    const alphaOld = oldProps.find((p) => p.content === 'Alpha launches in May.');
    expect(newProps.find((p) => p.content === 'Alpha launches in May.').memory_id).toBe(
      alphaOld.memory_id,
    );
    for (const gone of oldProps.filter((p) => p.content !== 'Alpha launches in May.')) {
      expect((await ws.req('GET', `/v1/memories/${gone.memory_id}`)).status).toBe(404);
    }
    const all = await ws.all();
    expect(all).toHaveLength(4);
    expect(all.filter((m: any) => m.kind === 'document').map((m: any) => m.memory_id)).toEqual([
      docId,
    ]);
    // Recall finds the new statements, not the removed ones.
    const rec = await ws.req('POST', '/v1/recall', {
      body: { cue: 'Gamma is cancelled', strategies: ['similarity'], top_k: 10 },
    });
    expect(rec.status).toBe(200);
    expect(rec.body.results.map((r: any) => r.memory.content)).not.toContain('Gamma is cancelled.');
  });

  it('a changed entity in the front matter moves the document and all its statements to the new entity', async () => {
    const ws = await fresh();
    const v1 =
      '---\nentity_id: acme\n---\nThe factory runs three shifts. Orders doubled this year.\n';
    const v2 =
      '---\nentity_id: globex\n---\nThe factory runs three shifts. Orders tripled this year.\n';
    const first = await uploadOk(ws, [['notes/factory.md', v1]]);
    const docId = first.files[0].document_id;
    const second = await uploadOk(ws, [['notes/factory.md', v2]]);
    expect(second.files[0]).toMatchObject({ document_id: docId, status: 'updated' });
    expect((await ws.req('GET', `/v1/memories/${docId}`)).body.entity_id).toBe('globex');
    const props = await propositionsOf(ws, docId);
    expect(props).toHaveLength(2);
    for (const p of props) expect(p.entity_id, p.content).toBe('globex');
    expect((await ws.req('GET', '/v1/entities')).body).toEqual(['globex']);
  });

  describe('a bad file rejects the whole request (400 naming it) and nothing of that request is stored', () => {
    const bad: Array<[string, File]> = [
      ['binary (NUL bytes)', ['notes/blob.md', Buffer.from([0x41, 0x42, 0x00, 0x01, 0x02, 0x43])]],
      ['not UTF-8', ['notes/latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0xff, 0xfe])]],
      ['a .pdf', ['docs/report.pdf', '%PDF-1.4 pretend this is a pdf']],
      ['larger than 64 KiB', ['docs/huge.md', `${'All work and no play. '.repeat(3000)}`]],
      ['empty', ['docs/empty.md', '']],
      ['only whitespace', ['docs/blank.txt', '\n   \n\t\n']],
    ];
    it.each(bad)('%s', async (_name, file) => {
      const ws = await fresh();
      for (const files of [
        [['good/first.md', ACME], file],
        [file, ['good/last.md', README]],
      ] as File[][]) {
        const res = await ws.upload(files);
        expect(res.status, res.text).toBe(400);
        expect(res.body.error_code).toBe('invalid_input');
        expect(res.body.message).toContain(file[0]);
        expect(await ws.all()).toEqual([]);
      }
    });
  });

  it('a file of exactly 64 KiB is accepted', async () => {
    const ws = await fresh();
    const sentence = 'The quick brown fox jumps over the lazy dog. ';
    let text = sentence.repeat(Math.floor(65_536 / sentence.length));
    text += 'x'.repeat(65_536 - Buffer.byteLength(text));
    expect(Buffer.byteLength(text)).toBe(65_536);
    const out = await uploadOk(ws, [['docs/max.txt', text]]);
    expect(out.files[0].status).toBe('created');
  });

  it('rejects a request without files (400) and a body that is not multipart (415)', async () => {
    const ws = await fresh();
    const form = new FormData();
    form.append('other', 'value');
    const none = await fetch(`${t.base}/v1/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ws.key}` },
      body: form,
    });
    expect(none.status).toBe(400);
    expect(((await none.json()) as any).error_code).toBe('invalid_input');
    const json = await ws.req('POST', '/v1/upload', { body: { files: ['a.md'] } });
    expect(json.status).toBe(415);
    expect(json.body.error_code).toBe('unsupported_media_type');
    expect(await ws.all()).toEqual([]);
  });

  it('works under /v1/workspaces/<slug>/upload, storing into that workspace only', async () => {
    const ws = await fresh();
    const other = await fresh();
    const out = await uploadOk(
      ws,
      [['entities/acme/profile.md', ACME]],
      `/v1/workspaces/${ws.slug}/upload`,
    );
    expect((await ws.all()).map((m: any) => m.memory_id)).toContain(out.files[0].document_id);
    expect(await other.all()).toEqual([]);
    // The admin key may name any workspace.
    const form = new FormData();
    form.append('files', new Blob([README]), 'readme.txt');
    const admin = await fetch(`${t.base}/v1/workspaces/${other.slug}/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.adminKey}` },
      body: form,
    });
    expect(admin.status).toBe(200);
    expect((await other.all()).filter((m: any) => m.kind === 'document')).toHaveLength(1);
    // A workspace key may not.
    const denied = await ws.upload([['readme.txt', README]], {
      path: `/v1/workspaces/${other.slug}/upload`,
    });
    expect(denied.status).toBe(403);
    expect((await other.all()).filter((m: any) => m.kind === 'document')).toHaveLength(1);
  });
});
