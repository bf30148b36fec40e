/** @module pages/signin — asks for an API key and checks it with whoami before showing anything. */
import { useState } from 'preact/hooks';
import { signIn, type Session } from '../session.ts';

export function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await signIn(key));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="signin">
      <h1>Sign in</h1>
      <p>
        Paste an API key. It stays in this tab only (sessionStorage) and is sent as a bearer header.
      </p>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          spellcheck={false}
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          placeholder="fb_admin_… or fb_live_…"
          autoFocus
          required
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
      </form>
      {error !== null && (
        <p class="error" role="alert" id="signin-error">
          {error}
        </p>
      )}
    </main>
  );
}
