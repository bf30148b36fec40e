/**
 * @module api-panel — "the call behind this page": a panel under each view with the REST call it
 * makes as curl, Python and TypeScript (tabs; arrow keys move between them), a copy button, and
 * the link to the API reference (the server's `/docs` page when it has one, else the OpenAPI
 * document).
 */
import { useEffect, useState } from 'preact/hooks';
import { curl, python, requestLine, typescript, type ApiCall } from './api-call.ts';
import type { Session } from './session.ts';

const TABS = [
  ['curl', 'curl', curl],
  ['python', 'Python', python],
  ['typescript', 'TypeScript', typescript],
] as const;

let reference: Promise<string> | null = null;

/** Where the API reference is: `/docs` when the server serves it, else `/v1/openapi.json`. */
export function apiReference(): Promise<string> {
  reference ??= fetch('/docs', { method: 'HEAD' }).then(
    (r) => (r.ok ? '/docs' : '/v1/openapi.json'),
    () => '/v1/openapi.json',
  );
  return reference;
}

export function useApiReference(): string {
  const [url, setUrl] = useState('/docs');
  useEffect(() => void apiReference().then(setUrl), []);
  return url;
}

export function ApiPanel({
  session,
  call,
  what,
}: {
  session: Session;
  call: ApiCall | null;
  what: string;
}) {
  const [tab, setTab] = useState(0);
  const [copied, setCopied] = useState(false);
  const ref = useApiReference();
  if (call === null) return null;
  const ctx = {
    baseUrl: window.location.origin,
    workspace: session.workspace === session.whoami.workspace.slug ? null : session.workspace,
  };
  const line = requestLine(call, ctx);
  const [id, , write] = TABS[tab] ?? TABS[0];
  const text = write(call, ctx);
  const onKey = (e: KeyboardEvent): void => {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
    e.preventDefault();
    const next = (tab + (e.key === 'ArrowRight' ? 1 : TABS.length - 1)) % TABS.length;
    setTab(next);
    (document.getElementById(`api-tab-${TABS[next]?.[0]}`) as HTMLElement | null)?.focus();
  };
  return (
    <details class="panel api" id="api-call">
      <summary>
        API call for {what}:{' '}
        <code>
          {line.method} {line.url.length > 90 ? `${line.url.slice(0, 89)}…` : line.url}
        </code>
      </summary>
      <div role="tablist" aria-label="Language" class="row" onKeyDown={onKey}>
        {TABS.map(([key, label], i) => (
          <button
            key={key}
            type="button"
            role="tab"
            id={`api-tab-${key}`}
            aria-selected={i === tab}
            aria-controls="api-code"
            tabIndex={i === tab ? 0 : -1}
            class={i === tab ? 'tab on' : 'tab'}
            onClick={() => setTab(i)}
          >
            {label}
          </button>
        ))}
        <span class="grow" />
        <button
          type="button"
          onClick={() => void navigator.clipboard?.writeText(text).then(() => setCopied(true))}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <a href={ref} target="_blank" rel="noopener">
          API reference ↗
        </a>
      </div>
      <pre
        class="json code"
        id="api-code"
        role="tabpanel"
        aria-labelledby={`api-tab-${id}`}
        data-lang={id}
      >
        {text}
      </pre>
      <p class="sub">
        The key is read from <code>FLASHBULB_API_KEY</code>; it is never shown here.
      </p>
    </details>
  );
}
