import { type FormEvent, useState } from 'react';
import {
  ConsoleChangeUserRoleDocument,
  ConsoleDisableUserDocument,
  ConsoleInviteUserDocument,
  ConsolePeopleDocument,
  type ConsolePeopleQuery,
  ConsoleResetUserPasswordDocument,
  type UserRole,
} from '../../../generated/console.js';
import { formatDate } from '../investigations/format.js';
import { OneTimeSecret } from '../OneTimeSecret.js';
import type { PageProps } from '../routes.js';
import { hasRole, type User } from '../session.js';
import { useAction } from '../use-action.js';
import { latest, useQuery } from '../use-query.js';

type Person = ConsolePeopleQuery['users'][number];
const ROLES: Record<UserRole, string> = {
  viewer: 'Viewer (reads)',
  analyst: 'Analyst (also triages, approves devices)',
  admin: 'Admin (also manages fleet and people)',
};

/** A link the server showed once: who it is for and until when. */
interface ShownLink {
  email: string;
  url: string;
  expiresAt: string;
}

/** The people of the chosen tenant, for its admins: invite (a one-time link to pass on), change role, disable, reset a password. */
export function PeoplePage({ user, tenant }: PageProps) {
  const { state, reload } = useQuery(ConsolePeopleDocument, { customerId: tenant.customerId });
  const { busy, problem, run } = useAction(reload);
  const [link, setLink] = useState<ShownLink>();
  const data = latest(state);

  if (!hasRole(user, 'admin')) {
    return (
      <>
        <h1>People</h1>
        <p>Only admins manage people. Ask an admin of your organization.</p>
      </>
    );
  }
  const show = (answer: { user: { email: string }; setPasswordLink: { url: string; expiresAt: string } } | undefined) =>
    answer && setLink({ email: answer.user.email, ...answer.setPasswordLink });

  return (
    <>
      <h1>People of {tenant.name ?? tenant.customerId}</h1>
      <InviteForm
        busy={busy}
        onInvite={async (email, role, name) =>
          show((await run(ConsoleInviteUserDocument, { input: { customerId: tenant.customerId, email, role, name } }))?.inviteUser)
        }
      />
      {link && (
        <section aria-labelledby="link-title" className="shown-once">
          <h2 id="link-title">Set-password link for {link.email}</h2>
          <OneTimeSecret
            label="One-time link"
            value={link.url}
            rows={2}
            note={`Shown only now. Pass it to ${link.email} by a channel you trust; it works once, until ${formatDate(link.expiresAt)}.`}
          />
        </section>
      )}
      {problem && (
        <p role="alert" className="problem">
          {problem}
        </p>
      )}
      {state.kind === 'failed' && (
        <p role="alert" className="problem">
          The people could not be listed: {state.message}
        </p>
      )}
      {state.kind === 'loading' && !data && <p role="status">Loading people…</p>}
      {data && (
        <PeopleTable
          people={data.users}
          user={user}
          busy={busy}
          onRole={(userId, role) => void run(ConsoleChangeUserRoleDocument, { userId, role })}
          onDisable={(userId) => void run(ConsoleDisableUserDocument, { userId })}
          onReset={async (userId) => show((await run(ConsoleResetUserPasswordDocument, { userId }))?.resetUserPassword)}
        />
      )}
    </>
  );
}

function RoleSelect({ id, value, onChange, label }: { id: string; value: UserRole; onChange: (role: UserRole) => void; label: string }) {
  return (
    <select id={id} aria-label={label} value={value} onChange={(e) => onChange(e.target.value as UserRole)}>
      {Object.entries(ROLES).map(([role, text]) => (
        <option key={role} value={role}>
          {text}
        </option>
      ))}
    </select>
  );
}

function InviteForm({ busy, onInvite }: { busy: boolean; onInvite: (email: string, role: UserRole, name: string) => Promise<unknown> }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<UserRole>('analyst');
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await onInvite(email.trim(), role, name.trim());
    setEmail('');
    setName('');
  };
  return (
    <form className="filters" aria-labelledby="invite-title" onSubmit={(event) => void submit(event)}>
      <h2 id="invite-title" className="visually-hidden">
        Invite a person
      </h2>
      <label>
        Email
        <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
      </label>
      <label>
        Name (optional)
        <input autoComplete="off" maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Role
        <RoleSelect id="invite-role" label="Role" value={role} onChange={setRole} />
      </label>
      <button type="submit" disabled={busy}>
        Invite
      </button>
    </form>
  );
}

function PeopleTable({
  people,
  user,
  busy,
  onRole,
  onDisable,
  onReset,
}: {
  people: Person[];
  user: User;
  busy: boolean;
  onRole: (userId: string, role: UserRole) => void;
  onDisable: (userId: string) => void;
  onReset: (userId: string) => void;
}) {
  return (
    <table className="investigations people">
      <caption className="visually-hidden">People</caption>
      <thead>
        <tr>
          <th scope="col">Email</th>
          <th scope="col">Name</th>
          <th scope="col">Role</th>
          <th scope="col">Status</th>
          <th scope="col">Two-factor</th>
          <th scope="col">Since</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        {people.map((person) => {
          // docs/users.md: an admin cannot change their own role or disable themself.
          const self = person.id === user.id;
          const active = person.status === 'active';
          return (
            <tr key={person.id}>
              <td>{person.email}</td>
              <td>{person.name ?? '—'}</td>
              <td>
                {self || !active ? (
                  person.role
                ) : (
                  <RoleSelect id={`role-${person.id}`} label={`Role of ${person.email}`} value={person.role} onChange={(role) => onRole(person.id, role)} />
                )}
              </td>
              <td>{person.status}</td>
              <td>{person.twoFactorEnabled ? 'On' : 'Off'}</td>
              <td>{formatDate(person.createdAt)}</td>
              <td className="inline-actions">
                {!self && active && (
                  <>
                    <button
                      type="button"
                      disabled={busy}
                      onClick={() => onReset(person.id)}
                      aria-label={`Reset password of ${person.email}`}
                      title="A new one-time set-password link"
                    >
                      Reset password
                    </button>
                    <button
                      type="button"
                      disabled={busy}
                      aria-label={`Disable ${person.email}`}
                      onClick={() => confirm(`Disable ${person.email}? They are signed out at once and cannot sign in again.`) && onDisable(person.id)}
                    >
                      Disable
                    </button>
                  </>
                )}
                {self && <span className="note">You</span>}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
