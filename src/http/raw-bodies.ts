/**
 * @module http/raw-bodies — the two routes that decode their own bodies instead of taking JSON:
 * upload (multipart/form-data, one part per document) and import (NDJSON, each line checked
 * against the export line schema, http/ndjson reads them). Everything else in the route table gets
 * its body already validated by `route()`.
 */
import type { Static } from '@sinclair/typebox';
import { compile } from '../api/compile.ts';
import * as S from '../api/requests.ts';
import { FlashbulbError, invalid } from '../errors/codes.ts';
import { importLines, type ImportSummary, type LineInput } from '../verbs/transfer.ts';
import { upload } from '../verbs/upload.ts';
import { ndjsonLines } from './ndjson.ts';
import { ctxOf, type RouteInput } from './route.ts';
import { parseMultipart } from './multipart.ts';

/** Each import line is checked against the export line schema. */
const transferLine = compile(S.TransferLine);

/** POST /v1/upload: the "files" (or "file") parts of a multipart body; each part's filename is its path. */
export async function uploadFiles(i: RouteInput): ReturnType<typeof upload> {
  const parts = parseMultipart(i.rawBody, i.contentType);
  if (!parts)
    throw new FlashbulbError(
      'unsupported_media_type',
      'upload needs Content-Type multipart/form-data with "files" parts',
    );
  const files = parts.filter((p) => p.name === 'files' || p.name === 'file');
  for (const p of files)
    if (!p.filename)
      throw invalid(`a "${p.name}" part has no filename; the filename is the file's relative path`);
  return upload(ctxOf(i), {
    files: files.map((p) => ({ filePath: p.filename ?? '', data: p.data })),
  });
}

/** POST /v1/import: NDJSON in the export format (JSON and plain-text content types are taken too). */
export async function importNdjson(
  i: RouteInput,
  query: Static<typeof S.ImportQuery>,
): Promise<ImportSummary> {
  const type = i.contentType;
  if (
    type !== '' &&
    !/^(application\/(x-)?ndjson|application\/jsonl|application\/json|text\/plain)\b/i.test(type)
  ) {
    throw new FlashbulbError(
      'unsupported_media_type',
      `import takes NDJSON (Content-Type application/x-ndjson), got '${type}'`,
    );
  }
  const lines = ndjsonLines<LineInput>(
    i.rawBody,
    query.first_line ?? 1,
    transferLine as (value: unknown) => LineInput,
  );
  return importLines(ctxOf(i), { lines });
}
