/**
 * @module pages/admin — workspaces (list, create, delete) and API keys (list, create, revoke) for
 * admin keys. A new key is shown once, right after it is made; the server never returns it again.
 */
import { useState } from 'preact/hooks';
import type { KeyInfo } from '../../../clients/typescript/src/index.ts';
import { when } from '../format.ts';
import { describeError, notifyWorkspacesChanged, type Session } from '../session.ts';
import { Confirm, ErrorBanner, useAsync } from '../ui.tsx';

interface Pending {
  title: string;
  text: string;
  label: string;
  run: () => Promise<void>;
}

export function AdminPage({ session }: { session: Session }) {
  const [secret, setSecret] = useState<{ key: string; what: string } | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  const workspaces = useAsync(() => session.root.workspacesList(), [session]);
  const keys = useAsync(() => session.root.keysList(), [session]);
  if (session.whoami.role !== 'admin') {
    return (
      <>
        <h1>Workspaces and keys</h1>
        <p>
          This page needs an admin key. You are signed in with a workspace key for{' '}
          <b>{session.whoami.workspace.slug}</b> ({session.whoami.key_id}).
        </p>
      </>
    );
  }
  const act = async (f: () => Promise<void>): Promise<void> => {
    setMessage(null);
    try {
      await f();
    } catch (err) {
      setMessage(describeError(err));
    }
  };
  const confirm = async (): Promise<void> => {
    const p = pending;
    setPending(null);
    if (p) await act(p.run);
  };
  return (
    <>
      <h1>Workspaces and keys</h1>
      {secret && (
        <div class="panel secret" role="alert" id="new-key">
          <p>
            <b>{secret.what}</b> Copy it now: it is shown only this once.
          </p>
          <code class="key" id="new-key-value">
            {secret.key}
          </code>
          <div class="row">
            <button type="button" onClick={() => void navigator.clipboard?.writeText(secret.key)}>
              Copy
            </button>
            <button type="button" onClick={() => setSecret(null)}>
              I have stored it
            </button>
          </div>
        </div>
      )}
      <ErrorBanner error={message} />
      <section aria-labelledby="ws-h">
        <h2 id="ws-h">Workspaces</h2>
        <ErrorBanner error={workspaces.error} />
        <CreateWorkspace
          onCreate={(slug, name) =>
            act(async () => {
              const r = await session.root.workspacesCreate({
                slug,
                ...(name === '' ? {} : { name }),
              });
              setSecret({
                key: r.api_key,
                what: `Workspace ${r.workspace.slug} created with key ${r.key_id}.`,
              });
              notifyWorkspacesChanged();
              workspaces.reload();
              keys.reload();
            })
          }
        />
        <table>
          <thead>
            <tr>
              <th>Slug</th>
              <th>Name</th>
              <th>Memories</th>
              <th>Created</th>
              <th>
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {workspaces.data?.workspaces.map((w) => (
              <tr key={w.slug}>
                <td>{w.slug}</td>
                <td>{w.name}</td>
                <td>{w.memory_count}</td>
                <td>{when(w.created_at)}</td>
                <td>
                  <button
                    type="button"
                    class="danger"
                    disabled={w.slug === session.whoami.workspace.slug}
                    title={
                      w.slug === session.whoami.workspace.slug
                        ? 'the workspace of the key you are using'
                        : ''
                    }
                    onClick={() =>
                      setPending({
                        title: `Delete workspace ${w.slug}?`,
                        text: `Its ${w.memory_count} memories are erased and its keys revoked. This cannot be undone.`,
                        label: 'Delete',
                        run: async () => {
                          const r = await session.root.workspacesDelete(w.slug);
                          setMessage(
                            `Deleted ${r.deleted}: ${r.memories_deleted} memories, ${r.keys_revoked} keys revoked.`,
                          );
                          notifyWorkspacesChanged();
                          workspaces.reload();
                          keys.reload();
                        },
                      })
                    }
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section aria-labelledby="keys-h">
        <h2 id="keys-h">API keys</h2>
        <ErrorBanner error={keys.error} />
        <CreateKey
          workspaces={workspaces.data?.workspaces.map((w) => w.slug) ?? [session.workspace]}
          onCreate={(body) =>
            act(async () => {
              const r = await session.root.keysCreate(body);
              setSecret({
                key: r.api_key,
                what: `Key ${r.key_id} (${r.role}, ${r.workspace}) created.`,
              });
              keys.reload();
            })
          }
        />
        <table id="keys-table">
          <thead>
            <tr>
              <th>Key id</th>
              <th>Role</th>
              <th>Workspace</th>
              <th>Label</th>
              <th>Created</th>
              <th>
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data?.keys.map((k: KeyInfo) => (
              <tr key={k.key_id} data-key-id={k.key_id}>
                <td>
                  <code>{k.key_id}</code>
                  {k.key_id === session.whoami.key_id && <span class="badge">this session</span>}
                </td>
                <td>{k.role}</td>
                <td>{k.workspace}</td>
                <td>{k.label ?? ''}</td>
                <td>{when(k.created_at)}</td>
                <td>
                  <button
                    type="button"
                    class="danger"
                    disabled={k.key_id === session.whoami.key_id}
                    aria-label={`Revoke ${k.key_id}`}
                    onClick={() =>
                      setPending({
                        title: `Revoke ${k.key_id}?`,
                        text: 'Requests with this key fail from now on. This cannot be undone.',
                        label: 'Revoke',
                        run: async () => {
                          const r = await session.root.keysRevoke(k.key_id);
                          setMessage(`Revoked ${r.revoked.key_id}.`);
                          keys.reload();
                        },
                      })
                    }
                  >
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <Confirm
        open={pending !== null}
        title={pending?.title ?? ''}
        confirmLabel={pending?.label ?? 'OK'}
        onConfirm={confirm}
        onCancel={() => setPending(null)}
      >
        <p>{pending?.text}</p>
      </Confirm>
      {message !== null && (
        <p role="status" id="admin-status">
          {message}
        </p>
      )}
    </>
  );
}

function CreateWorkspace({
  onCreate,
}: {
  onCreate: (slug: string, name: string) => Promise<void>;
}) {
  const [slug, setSlug] = useState('');
  const [name, setName] = useState('');
  return (
    <form
      class="row"
      onSubmit={(e) => {
        e.preventDefault();
        void onCreate(slug, name).then(() => {
          setSlug('');
          setName('');
        });
      }}
    >
      <label>
        Slug{' '}
        <input
          required
          value={slug}
          pattern="[a-z0-9][a-z0-9_-]*"
          title="lower-case letters, digits, - and _"
          onInput={(e) => setSlug(e.currentTarget.value)}
          class="narrow"
        />
      </label>
      <label>
        Name <input value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <button type="submit">Create workspace</button>
    </form>
  );
}

function CreateKey({
  workspaces,
  onCreate,
}: {
  workspaces: string[];
  onCreate: (b: {
    workspace: string;
    role: 'admin' | 'workspace';
    label?: string;
  }) => Promise<void>;
}) {
  const [workspace, setWorkspace] = useState(workspaces[0] ?? 'default');
  const [role, setRole] = useState<'admin' | 'workspace'>('workspace');
  const [label, setLabel] = useState('');
  return (
    <form
      class="row"
      id="create-key"
      onSubmit={(e) => {
        e.preventDefault();
        void onCreate({ workspace, role, ...(label === '' ? {} : { label }) }).then(() =>
          setLabel(''),
        );
      }}
    >
      <label>
        Workspace
        <select value={workspace} onChange={(e) => setWorkspace(e.currentTarget.value)}>
          {workspaces.map((w) => (
            <option key={w} value={w}>
              {w}
            </option>
          ))}
        </select>
      </label>
      <label>
        Role
        <select
          value={role}
          onChange={(e) => setRole(e.currentTarget.value as 'admin' | 'workspace')}
        >
          <option value="workspace">workspace</option>
          <option value="admin">admin</option>
        </select>
      </label>
      <label>
        Label{' '}
        <input
          id="key-label"
          value={label}
          onInput={(e) => setLabel(e.currentTarget.value)}
          class="narrow"
        />
      </label>
      <button type="submit">Create key</button>
    </form>
  );
}
