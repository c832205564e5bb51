import { type FormEvent, useCallback, useState } from 'react';
import {
  ConsoleDecideDeviceDocument,
  ConsoleDeviceAuthorizationDocument,
  ConsoleDeviceAuthorizationStatusDocument,
  type ConsoleDeviceAuthorizationStatusSubscription,
} from '../../../generated/console.js';
import { request } from '../api.js';
import { formatDate } from '../investigations/format.js';
import { LiveProblem, useLive } from '../live.js';
import { can } from '../permissions.js';
import { Problem, QueryView, useAction } from '../query-view.js';
import { navigate, useLocation } from '../router.js';
import { useQuery } from '../use-query.js';
import type { FleetProps } from './FleetRoutes.js';
import { Refused } from './ProvisionPage.js';

/**
 * A device waiting for approval: the operator types the code the device shows (or follows its
 * link, `?user_code=`), compares it, and approves or denies; the status follows live.
 */
export function DevicesPage({ user, tenant }: FleetProps) {
  const code = useLocation().searchParams.get('user_code') ?? '';
  const lookUp = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const typed = String(new FormData(event.currentTarget).get('userCode') ?? '').trim();
    navigate(`/fleet/devices?user_code=${encodeURIComponent(typed)}`);
  };
  return (
    <>
      <h1>Device approvals</h1>
      {!can(user, 'devices.approve') && <Refused user={user} what="approve devices" />}
      <p>
        A collector installed without a key shows a code such as ABCD-EFGH. Type it here to see the device and decide; an approved device joins{' '}
        {tenant.name ?? tenant.customerId}.
      </p>
      <form className="filters" onSubmit={lookUp} key={`form:${code}`}>
        <label>
          Code shown by the device
          <input name="userCode" defaultValue={code} autoComplete="off" required placeholder="XXXX-XXXX" />
        </label>
        <button type="submit">Look up</button>
      </form>
      {code && <PendingDevice key={`device:${code}`} userCode={code} mayDecide={can(user, 'devices.approve')} />}
    </>
  );
}

function PendingDevice({ userCode, mayDecide }: { userCode: string; mayDecide: boolean }) {
  const { state, reload } = useQuery(ConsoleDeviceAuthorizationDocument, { userCode });
  const [liveStatus, setLiveStatus] = useState<string>();
  const { busy, problem, run } = useAction();
  const onStatus = useCallback((data: ConsoleDeviceAuthorizationStatusSubscription) => setLiveStatus(data.deviceAuthorizationStatus.status), []);
  const liveProblem = useLive(ConsoleDeviceAuthorizationStatusDocument, { userCode }, onStatus);
  const decide = async (action: 'approve' | 'deny') => {
    const result = await run(() => request(ConsoleDecideDeviceDocument, { userCode, action }));
    if (result) setLiveStatus(result.approveDeviceAuthorization.status);
  };
  return (
    <QueryView state={state} what="The device request" reload={reload}>
      {({ deviceAuthorization: device }) => {
        const status = liveStatus ?? device.status;
        return (
          <section aria-labelledby="device-heading" className="device">
            <h2 id="device-heading">{device.hostname}</h2>
            <p>
              Code <span className="user-code">{device.userCode}</span>: check that the device shows the same.
            </p>
            <dl className="facts">
              <dt>Machine id</dt>
              <dd>{device.machineId}</dd>
              <dt>Asked</dt>
              <dd>{formatDate(device.createdAt)}</dd>
              <dt>Expires</dt>
              <dd>{formatDate(device.expiresAt)}</dd>
              <dt>Status</dt>
              <dd>
                <span role="status" data-testid="device-status">
                  {status}
                </span>
              </dd>
            </dl>
            {status === 'pending' && mayDecide && (
              <div className="actions">
                <button type="button" disabled={busy} onClick={() => void decide('approve')}>
                  Approve {device.hostname}
                </button>
                <button type="button" disabled={busy} onClick={() => void decide('deny')}>
                  Deny
                </button>
              </div>
            )}
            <Problem text={problem && `The decision was not recorded: ${problem}`} />
            <LiveProblem problem={liveProblem} />
          </section>
        );
      }}
    </QueryView>
  );
}
