/**
 * @module app — the shell: sign-in gate, navigation, workspace picker (admins), theme switch, and
 * the page for the current hash route.
 */
import { useEffect, useState } from 'preact/hooks';
import { useApiReference } from './api-panel.tsx';
import { ActivityPage } from './pages/activity.tsx';
import { EntitiesPage, EntityPage } from './pages/entities.tsx';
import { GraphPage } from './pages/graph.tsx';
import { HealthPage } from './pages/health.tsx';
import { InsightsPage } from './pages/insights.tsx';
import { LivePage } from './pages/live.tsx';
import { MemoriesPage } from './pages/memories.tsx';
import { MemoryPage } from './pages/memory.tsx';
import { SignIn } from './pages/signin.tsx';
import { AdminPage } from './pages/admin.tsx';
import { href, useLocation, type Location } from './router.ts';
import {
  onWorkspacesChanged,
  openWithoutKey,
  signIn,
  signOut,
  storedKey,
  withWorkspace,
  type Session,
} from './session.ts';
import { applyTheme, initialTheme, type Theme } from './theme.ts';
import { useAsync } from './ui.tsx';

const NAV: ReadonlyArray<[string, string, 'all' | 'admin']> = [
  ['memories', 'Memories', 'all'],
  ['entities', 'Entities', 'all'],
  ['graph', 'Graph', 'all'],
  ['live', 'Live', 'all'],
  ['insights', 'Insights', 'all'],
  ['activity', 'Activity', 'admin'],
  ['admin', 'Workspaces', 'all'],
  ['health', 'Health', 'admin'],
];

export function App() {
  const [theme, setTheme] = useState<Theme>(initialTheme);
  const [session, setSession] = useState<Session | null>(null);
  const [resuming, setResuming] = useState(true);
  useEffect(() => applyTheme(theme, false), []);
  useEffect(() => {
    // A key from earlier in this tab, or none needed (authentication off); else the sign-in form.
    const key = storedKey();
    const resume =
      key === null
        ? openWithoutKey()
        : signIn(key).catch(() => {
            signOut();
            return null;
          });
    resume.then(setSession).finally(() => setResuming(false));
  }, []);
  const toggleTheme = (): void => {
    const next = theme === 'dark' ? 'light' : 'dark';
    applyTheme(next, true);
    setTheme(next);
  };
  const themeButton = (
    <button
      type="button"
      class="ghost"
      onClick={toggleTheme}
      aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}
    >
      {theme === 'dark' ? '☀ Light' : '☾ Dark'}
    </button>
  );
  if (session === null) {
    return (
      <>
        <header class="top">
          <span class="brand">Flashbulb</span>
          <span class="grow" />
          {themeButton}
        </header>
        {resuming ? (
          <main>
            <p role="status">Signing in…</p>
          </main>
        ) : (
          <SignIn onSignedIn={setSession} />
        )}
      </>
    );
  }
  return <Shell session={session} setSession={setSession} themeButton={themeButton} />;
}

function Shell({
  session,
  setSession,
  themeButton,
}: {
  session: Session;
  setSession: (s: Session | null) => void;
  themeButton: preact.JSX.Element;
}) {
  const loc = useLocation();
  const reference = useApiReference();
  const section = loc.parts[0] ?? 'memories';
  useEffect(() => {
    document.title = `${NAV.find(([id]) => id === section)?.[1] ?? 'Flashbulb'} · Flashbulb`;
  }, [section]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Flashbulb</span>
        <nav aria-label="Sections">
          {NAV.filter(([, , who]) => who === 'all' || session.whoami.role === 'admin').map(
            ([id, label]) => (
              <a key={id} href={href(id)} aria-current={section === id ? 'page' : undefined}>
                {label}
              </a>
            ),
          )}
        </nav>
        <span class="grow" />
        <WorkspacePicker
          session={session}
          onChange={(slug) => setSession(withWorkspace(session, slug))}
        />
        <a
          class="ghost reference"
          href={reference}
          target="_blank"
          rel="noopener"
          id="api-reference"
        >
          API reference ↗
        </a>
        <span class="who" title={session.whoami.key_id ?? 'authentication off'}>
          {session.whoami.auth_enabled ? session.whoami.role : 'authentication off'}
        </span>
        {themeButton}
        {session.whoami.auth_enabled && (
          <button
            type="button"
            class="ghost"
            onClick={() => {
              signOut();
              setSession(null);
            }}
          >
            Sign out
          </button>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        <Page loc={loc} session={session} />
      </main>
    </>
  );
}

function Page({ loc, session }: { loc: Location; session: Session }) {
  const [section = 'memories', id] = loc.parts;
  // The workspace is part of the key so that switching it remounts the page with fresh state.
  const k = session.workspace;
  switch (section) {
    case 'memories':
      return id === undefined ? (
        <MemoriesPage key={k} session={session} loc={loc} />
      ) : (
        <MemoryPage key={`${k}/${id}`} session={session} id={id} />
      );
    case 'entities':
      return id === undefined ? (
        <EntitiesPage key={k} session={session} loc={loc} />
      ) : (
        <EntityPage key={`${k}/${id}`} session={session} entity={id} loc={loc} />
      );
    case 'graph':
      return <GraphPage key={`${k}/${id ?? ''}`} session={session} center={id ?? null} loc={loc} />;
    case 'live':
      return <LivePage key={k} session={session} />;
    case 'insights':
      return <InsightsPage key={k} session={session} />;
    case 'activity':
      return <ActivityPage key={k} session={session} loc={loc} />;
    case 'admin':
      return <AdminPage key={k} session={session} />;
    case 'health':
      return <HealthPage session={session} />;
    default:
      return (
        <p>
          No page here. <a href={href('memories')}>Go to memories</a>.
        </p>
      );
  }
}

function WorkspacePicker({
  session,
  onChange,
}: {
  session: Session;
  onChange: (slug: string) => void;
}) {
  const admin = session.whoami.can_access === 'all';
  const list = useAsync(
    async () =>
      admin
        ? (await session.root.workspacesList()).workspaces.map((w) => w.slug)
        : [session.workspace],
    [admin, session.key],
  );
  useEffect(() => onWorkspacesChanged(list.reload), [list.reload]);
  if (!admin)
    return (
      <span class="badge" title="workspace">
        {session.workspace}
      </span>
    );
  const slugs = list.data ?? [session.workspace];
  return (
    <label class="inline">
      <span class="sr-only">Workspace</span>
      <select
        value={session.workspace}
        onChange={(e) => onChange(e.currentTarget.value)}
        onFocus={list.reload}
        aria-label="Workspace"
      >
        {(slugs.includes(session.workspace) ? slugs : [session.workspace, ...slugs]).map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
    </label>
  );
}
