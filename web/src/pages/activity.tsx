/**
 * @module pages/activity — the server's activity log (admin keys): writes, revisions, forgets,
 * imports, insights, workspaces and keys, newest first, with the key that made each change and
 * the memories' current text (none once forgotten); filtered by workspace, action and key, paged
 * by cursor.
 */
import { useState } from 'preact/hooks';
import type { ActivityQuery } from '../../../clients/typescript/src/index.ts';
import { ApiPanel } from '../api-panel.tsx';
import { ago, clip, shortId, when } from '../format.ts';
import { href, setQuery, type Location } from '../router.ts';
import type { Session } from '../session.ts';
import { ErrorBanner, Notice, useAsync } from '../ui.tsx';

const ACTIONS: ReadonlyArray<NonNullable<ActivityQuery['action']>> = [
  'remember',
  'revise',
  'forget',
  'import',
  'upload',
  'reflect',
  'insights_commit',
  'verdicts',
  'workspace_create',
  'workspace_update',
  'workspace_delete',
  'key_create',
  'key_revoke',
];

export function ActivityPage({ session, loc }: { session: Session; loc: Location }) {
  const q = loc.query;
  const query: ActivityQuery = { limit: 50 };
  const ws = q.get('workspace') ?? '';
  const action = q.get('action') ?? '';
  const key = q.get('key') ?? '';
  if (ws !== '') query.workspace = ws;
  if ((ACTIONS as readonly string[]).includes(action))
    query.action = action as NonNullable<ActivityQuery['action']>;
  if (key !== '') query.key_id = key;
  const filterKey = JSON.stringify(query);
  const [paging, setPaging] = useState<{ key: string; cursors: Array<string | undefined> }>({
    key: filterKey,
    cursors: [undefined],
  });
  const cursors = paging.key === filterKey ? paging.cursors : [undefined];
  const cursor = cursors[cursors.length - 1];
  const page = useAsync(
    async () =>
      session.whoami.role === 'admin'
        ? session.root.activity({ ...query, ...(cursor === undefined ? {} : { cursor }) })
        : null,
    [session, filterKey, cursor],
  );
  const workspaces = useAsync(
    async () =>
      session.whoami.role === 'admin'
        ? (await session.root.workspacesList()).workspaces.map((w) => w.slug)
        : [],
    [session],
  );
  if (session.whoami.role !== 'admin') {
    return (
      <>
        <h1>Activity</h1>
        <p>The activity log needs an admin key.</p>
      </>
    );
  }
  return (
    <>
      <h1>
        Activity <span class="sub">changes, newest first</span>
      </h1>
      <form class="row filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Workspace
          <select
            id="activity-workspace"
            value={ws}
            onChange={(e) => setQuery(loc, { workspace: e.currentTarget.value })}
          >
            <option value="">all</option>
            {(workspaces.data ?? []).map((w) => (
              <option key={w} value={w}>
                {w}
              </option>
            ))}
          </select>
        </label>
        <label>
          Action
          <select
            id="activity-action"
            value={action}
            onChange={(e) => setQuery(loc, { action: e.currentTarget.value })}
          >
            <option value="">all</option>
            {ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a.replace('_', ' ')}
              </option>
            ))}
          </select>
        </label>
        <label>
          Key id{' '}
          <input
            class="narrow"
            defaultValue={key}
            onChange={(e) => setQuery(loc, { key: e.currentTarget.value.trim() })}
            placeholder="key_…"
          />
        </label>
        <button
          type="button"
          onClick={() => {
            setPaging({ key: filterKey, cursors: [undefined] });
            page.reload();
          }}
        >
          Refresh
        </button>
      </form>
      <ErrorBanner error={page.error} />
      {page.data?.entries.length === 0 && (
        <Notice>
          No activity{cursors.length > 1 ? ' older than this' : ' yet'} (the log lives in the
          server's memory: it starts empty at each start and keeps the newest{' '}
          {page.data.capacity.toLocaleString()} changes).
        </Notice>
      )}
      {page.data && page.data.entries.length > 0 && (
        <table id="activity-table">
          <thead>
            <tr>
              <th>When</th>
              <th>Action</th>
              <th>Workspace</th>
              <th>Key</th>
              <th>What</th>
            </tr>
          </thead>
          <tbody>
            {page.data.entries.map((e) => (
              <tr key={e.seq}>
                <td title={when(e.at_us)}>
                  <time dateTime={e.at_iso}>{ago(e.at_us)}</time>
                </td>
                <td>
                  <span class={`badge action-${e.action}`}>{e.action.replace('_', ' ')}</span>
                  {e.count > 1 ? ` ×${e.count}` : ''}
                </td>
                <td>{e.workspace}</td>
                <td>
                  {e.key_id === null ? (
                    <i>no key (authentication off)</i>
                  ) : (
                    <>
                      <button
                        type="button"
                        class="link"
                        title="only this key"
                        onClick={() => setQuery(loc, { key: e.key_id ?? undefined })}
                      >
                        {e.key_label ?? e.key_id}
                      </button>
                      {e.key_label !== null && <small> {e.key_id}</small>}
                    </>
                  )}
                </td>
                <td>
                  {e.detail !== null && <div class="sub">{e.detail}</div>}
                  {e.memories.map((m) => (
                    <div key={m.memory_id}>
                      {m.content === undefined ? (
                        <code>{shortId(m.memory_id)}</code>
                      ) : m.content === null ? (
                        <span class="sub">
                          <code>{shortId(m.memory_id)}</code> (gone: forgotten or deleted)
                        </span>
                      ) : e.workspace === session.workspace ? (
                        <a href={href('memories', m.memory_id)}>{clip(m.content, 120)}</a>
                      ) : (
                        <span title={`in workspace ${e.workspace}`}>{clip(m.content, 120)}</span>
                      )}
                    </div>
                  ))}
                  {e.count > e.memories.length && e.memories.length > 0 && (
                    <div class="sub">and {e.count - e.memories.length} more</div>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class="row">
        <button
          type="button"
          disabled={cursors.length <= 1}
          onClick={() => setPaging({ key: filterKey, cursors: cursors.slice(0, -1) })}
        >
          ← Newer
        </button>
        <button
          type="button"
          disabled={!page.data?.next_cursor}
          onClick={() =>
            page.data?.next_cursor &&
            setPaging({ key: filterKey, cursors: [...cursors, page.data.next_cursor] })
          }
        >
          Older →
        </button>
      </div>
      <ApiPanel session={session} call={{ op: 'activity', query: { ...query } }} what="this log" />
    </>
  );
}
