import { type FormEvent, useState } from 'react';
import {
  ConsoleAccountDocument,
  type ConsoleAccountQuery,
  ConsoleChangePasswordDocument,
  ConsoleConfirmTotpEnrolmentDocument,
  ConsoleDisableTotpDocument,
  ConsoleRevokeSessionDocument,
  ConsoleSetMyNameDocument,
  ConsoleStartTotpEnrolmentDocument,
} from '../../../generated/console.js';
import { ACCOUNT_CHANGED } from '../api.js';
import { formatDate } from '../investigations/format.js';
import { OneTimeSecret } from '../OneTimeSecret.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../SetPasswordPage.js';
import { useAction } from '../use-action.js';
import { latest, useQuery } from '../use-query.js';

type Session = ConsoleAccountQuery['mySessions'][number];

/** As the server checks it (MAX_NAME_LENGTH, src/modules/users/users.service.ts). */
const NAME_MAX = 100;

/** The signed-in person's own account: their name, password, two-factor sign-in, and their sessions. */
export function AccountPage() {
  const { state, reload } = useQuery(ConsoleAccountDocument, {});
  const data = latest(state);
  if (state.kind === 'failed')
    return (
      <p role="alert" className="problem">
        Your account could not be loaded: {state.message}
      </p>
    );
  if (!data?.me) return <p role="status">Loading your account…</p>;
  return (
    <>
      <h1>Your account</h1>
      <p>{data.me.email}</p>
      <NameForm name={data.me.name ?? null} onChanged={reload} />
      <PasswordForm />
      <TwoFactor enabled={data.me.twoFactorEnabled} onChanged={reload} />
      <Sessions sessions={data.mySessions} onChanged={reload} />
    </>
  );
}

function Problem({ text }: { text?: string }) {
  return (
    <p role="alert" className="problem">
      {text}
    </p>
  );
}

/** What others see of them (the header, People, triage); without one, their email's local part. */
function NameForm({ name, onChanged }: { name: string | null; onChanged: () => void }) {
  const { busy, problem, run } = useAction();
  const [value, setValue] = useState(name ?? '');
  const [done, setDone] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setDone(false);
    const answer = await run(ConsoleSetMyNameDocument, { name: value });
    if (!answer) return;
    setValue(answer.setMyName.name ?? '');
    setDone(true);
    onChanged();
    window.dispatchEvent(new Event(ACCOUNT_CHANGED));
  };
  return (
    <section aria-labelledby="name-title" className="account-card">
      <h2 id="name-title">Name</h2>
      <form onSubmit={(event) => void submit(event)} className="stacked">
        <label htmlFor="display-name">Your name, as others see it (empty: your email's first part)</label>
        <input id="display-name" autoComplete="name" maxLength={NAME_MAX} value={value} onChange={(e) => setValue(e.target.value)} />
        <button type="submit" disabled={busy}>
          Save name
        </button>
      </form>
      {done && <p role="status">Your name is saved.</p>}
      <Problem text={problem} />
    </section>
  );
}

function PasswordForm() {
  const { busy, problem, run } = useAction();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [done, setDone] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setDone(false);
    if (await run(ConsoleChangePasswordDocument, { currentPassword: current, newPassword: next })) {
      setCurrent('');
      setNext('');
      setDone(true);
    }
  };
  return (
    <section aria-labelledby="password-title" className="account-card">
      <h2 id="password-title">Password</h2>
      <form onSubmit={(event) => void submit(event)} className="stacked">
        <label htmlFor="current-password">Current password</label>
        <input id="current-password" type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
        <label htmlFor="changed-password">
          New password ({PASSWORD_MIN} to {PASSWORD_MAX} characters)
        </label>
        <input
          id="changed-password"
          type="password"
          autoComplete="new-password"
          minLength={PASSWORD_MIN}
          maxLength={PASSWORD_MAX}
          required
          value={next}
          onChange={(e) => setNext(e.target.value)}
        />
        <button type="submit" disabled={busy}>
          Change password
        </button>
        <Problem text={problem} />
        {done && <p role="status">Password changed. Your other sessions were signed out.</p>}
      </form>
    </section>
  );
}

/** Turning TOTP on: a new secret for the app, a code from it, then the recovery codes, shown once. */
function TwoFactor({ enabled, onChanged }: { enabled: boolean; onChanged: () => void }) {
  const { busy, problem, run } = useAction();
  const [enrolment, setEnrolment] = useState<{ secret: string; otpauthUri: string }>();
  const [code, setCode] = useState('');
  const [recoveryCodes, setRecoveryCodes] = useState<string[]>();
  const [password, setPassword] = useState('');

  const start = async () => setEnrolment((await run(ConsoleStartTotpEnrolmentDocument, {}))?.startTotpEnrolment);
  const confirm = async (event: FormEvent) => {
    event.preventDefault();
    const answer = await run(ConsoleConfirmTotpEnrolmentDocument, { code: code.replace(/\s/g, '') });
    if (!answer) return;
    setRecoveryCodes(answer.confirmTotpEnrolment);
    setEnrolment(undefined);
    setCode('');
    onChanged();
  };
  const disable = async (event: FormEvent) => {
    event.preventDefault();
    if (await run(ConsoleDisableTotpDocument, { password })) {
      setPassword('');
      setRecoveryCodes(undefined);
      onChanged();
    }
  };

  return (
    <section aria-labelledby="totp-title" className="account-card">
      <h2 id="totp-title">Two-factor sign-in</h2>
      {recoveryCodes && (
        <OneTimeSecret
          label="Recovery codes"
          value={recoveryCodes.join('\n')}
          rows={recoveryCodes.length}
          note="Shown only now. Keep them somewhere safe: each signs you in once without the app."
        />
      )}
      {enabled ? (
        <form onSubmit={(event) => void disable(event)} className="stacked">
          <p>On: signing in asks for a code from your authenticator app.</p>
          <label htmlFor="totp-off-password">Your password, to turn it off</label>
          <input
            id="totp-off-password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
          <button type="submit" disabled={busy}>
            Turn off two-factor sign-in
          </button>
        </form>
      ) : enrolment ? (
        <form onSubmit={(event) => void confirm(event)} className="stacked">
          <p>Add this account to your authenticator app with the key below (or the link, on a phone), then type the code it shows.</p>
          <OneTimeSecret label="Key" value={enrolment.secret} />
          <p>
            <a href={enrolment.otpauthUri}>Open in an authenticator app</a>
          </p>
          <label htmlFor="totp-confirm-code">Code from the app</label>
          <input id="totp-confirm-code" inputMode="numeric" autoComplete="one-time-code" required value={code} onChange={(e) => setCode(e.target.value)} />
          <button type="submit" disabled={busy}>
            Turn on
          </button>
        </form>
      ) : (
        <>
          <p>Off: signing in asks only for your password.</p>
          <button type="button" disabled={busy} onClick={() => void start()}>
            Set up two-factor sign-in
          </button>
        </>
      )}
      <Problem text={problem} />
    </section>
  );
}

function Sessions({ sessions, onChanged }: { sessions: Session[]; onChanged: () => void }) {
  const { busy, problem, run } = useAction(onChanged);
  return (
    <section aria-labelledby="sessions-title" className="account-card">
      <h2 id="sessions-title">Your sessions</h2>
      <table className="investigations">
        <caption className="visually-hidden">Your sessions in force, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Signed in</th>
            <th scope="col">Last used</th>
            <th scope="col">From</th>
            <th scope="col">Browser</th>
            <th scope="col">Ends</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {sessions.map((session) => (
            <tr key={session.id}>
              <td>{formatDate(session.createdAt)}</td>
              <td>{formatDate(session.lastSeenAt)}</td>
              <td>{session.address ?? '—'}</td>
              <td>{session.userAgent ?? '—'}</td>
              <td>{formatDate(session.expiresAt)}</td>
              <td>
                {session.current ? (
                  <span className="note">This session</span>
                ) : (
                  <button type="button" disabled={busy} onClick={() => void run(ConsoleRevokeSessionDocument, { id: session.id })}>
                    Sign out this session
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Problem text={problem} />
    </section>
  );
}
