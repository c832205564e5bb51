// The device approval page: shows the user code the link carries (for the operator to compare
// with the device's screen) and what the device sent, follows its status live over graphql-ws,
// and lets a signed-in person (analyst or admin) approve or deny it, warning when the machine is
// already enrolled in their tenant. The link never holds the device code, so this page cannot poll
// for the key. The person signs in with their console account: the session lives in the HttpOnly
// `bd_session` cookie, which no script here can read; every request carries the CSRF header the
// server asks of cookie-authenticated GraphQL.
import { subscribe } from './graphql-ws.js';

const FIELDS = 'userCode hostname machineId nodeId status createdAt expiresAt';
const DESCRIBE = `query DeviceApprovalPage($code: String) { deviceAuthorization(userCode: $code) { ${FIELDS} } }`;
const WATCH = `subscription DeviceApprovalStatus($code: String) { deviceAuthorizationStatus(userCode: $code) { ${FIELDS} } }`;
const ENROLLED = 'query DeviceApprovalEnrolledNode($code: String) { deviceAuthorization(userCode: $code) { enrolledNode { id hostname lastSeenAt } } }';
const ME = 'query ConsolePerson { me { email role customer { customerId name } } }';
const SIGN_IN = 'mutation ConsoleSignIn($input: SignInInput!) { signIn(input: $input) { secondFactorRequired } }';
const SIGN_OUT = 'mutation ConsoleSignOut { signOut }';
const DECIDE = 'mutation DeviceApprovalDecide($code: String, $action: String) { approveDeviceAuthorization(userCode: $code, action: $action) { status } }';
const DECIDERS = new Set(['analyst', 'admin']);

const STATUS_TEXT = {
  loading: 'Loading…',
  pending: 'Waiting for approval',
  approved: 'Approved. The device receives its credentials on its next poll.',
  denied: 'Denied. The device will not be enrolled.',
  expired: 'Expired. Start the enrolment again on the device.',
  unknown: 'Unknown code',
};

const $ = (id) => document.getElementById(id);
const code = (new URLSearchParams(location.search).get('user_code') ?? '').trim();
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

let device;
// The signed-in person (`me`), or null.
let session = null;
let busy = false;
let stopWatching;
let retryDelay = 1000;
let ticker;

/** A GraphQL request with the session cookie and the CSRF header; `errors[0]` is the first error, if any. */
async function graphql(query, variables = {}) {
  const res = await fetch('/graphql', {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json', 'x-graphql-yoga-csrf': '1' },
    body: JSON.stringify({ query, variables }),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  let body = null;
  try {
    body = await res.json();
  } catch {
    /* an empty or non-JSON body: the status says enough */
  }
  return { status: res.status, data: body?.data ?? null, error: body?.errors?.[0] ?? null };
}

// --- rendering ---

function setText(id, text) {
  const el = $(id);
  if (el.textContent !== text) el.textContent = text;
}

function setTime(id, iso) {
  const el = $(id);
  el.dateTime = iso;
  setText(id, dateTime.format(new Date(iso)));
}

function showError(id, message) {
  const el = $(id);
  el.textContent = message ?? '';
  el.hidden = !message;
}

function setStatus(status) {
  const el = $('status');
  if (el.dataset.status === status) return;
  el.dataset.status = status;
  setText('status-text', STATUS_TEXT[status] ?? status);
}

function render(view) {
  device = { ...device, ...view };
  setText('user-code', device.userCode);
  setText('hostname', device.hostname);
  setText('machine-id', device.machineId);
  setText('node-id', device.nodeId ?? '—');
  setTime('created-at', device.createdAt);
  setTime('expires-at', device.expiresAt);
  setStatus(device.status);
  tick();
  if (device.status === 'pending') ticker ??= setInterval(tick, 1000);
  else {
    clearInterval(ticker);
    ticker = undefined;
  }
  renderControls();
}

function tick() {
  if (!device) return;
  if (device.status !== 'pending') return setText('remaining', '');
  const seconds = Math.max(0, Math.round((Date.parse(device.expiresAt) - Date.now()) / 1000));
  const minutes = Math.floor(seconds / 60);
  setText('remaining', seconds === 0 ? '(now)' : `(in ${minutes ? `${minutes} min ` : ''}${seconds % 60} s)`);
}

function renderControls() {
  const pending = device?.status === 'pending';
  $('signin').hidden = Boolean(session) || !pending;
  $('decide').hidden = !session || !device;
  const mayDecide = Boolean(session && DECIDERS.has(session.role));
  if (session) {
    setText('who-person', session.email);
    setText('who-role', session.role);
    const { customerId, name } = session.customer;
    setText('who-tenant', name ? `${name} (${customerId})` : customerId);
  }
  $('role-warning').hidden = !session || mayDecide;
  renderEnrolled();
  $('approve').disabled = busy || !pending || !mayDecide;
  $('deny').disabled = busy || !pending || !mayDecide;
  $('signin-button').disabled = busy;
}

function renderEnrolled() {
  const node = session && device?.status === 'pending' ? device.enrolledNode : null;
  $('enrolled-warning').hidden = !node;
  if (!node) return;
  setText('enrolled-node-id', node.id);
  setText('enrolled-node-host', node.hostname ?? 'no hostname reported');
  setText('enrolled-node-seen', node.lastSeenAt ? dateTime.format(new Date(node.lastSeenAt)) : 'never');
  setText('enrolled-machine-id', device.machineId);
}

function setLive(state) {
  const el = $('live');
  el.hidden = !state;
  el.textContent = state === 'live' ? 'Status updates live.' : state === 'retrying' ? 'Reconnecting for live updates…' : '';
}

// --- data ---

async function load() {
  if (!code) {
    setStatus('unknown');
    return showError('page-error', 'This link has no code. Open the full link the device printed, or type the code it shows after ?user_code=.');
  }
  const { data, error } = await graphql(DESCRIBE, { code });
  const view = data?.deviceAuthorization;
  if (!view) {
    setStatus('unknown');
    const reason = error?.extensions?.code;
    return showError(
      'page-error',
      reason === 'not_found'
        ? 'This code is unknown. Check that the link is complete, or start the enrolment again on the device.'
        : reason === 'rate_limited'
          ? 'Too many lookups from your address; wait a minute and reload the page.'
          : `The device could not be loaded (${error?.message ?? 'network error'}).`,
    );
  }
  render(view);
  if (view.status === 'pending') watch();
  await loadPerson();
}

// Who the session cookie (if any) speaks for, then what their tenant knows of this machine.
async function loadPerson() {
  session = (await graphql(ME)).data?.me ?? null;
  renderControls();
  await checkEnrolled();
}

// With a session: is this machine id already a node of the operator's tenant? Asked again after
// each sign-in, since the answer depends on the tenant.
async function checkEnrolled() {
  if (!session || !device) return;
  const { data } = await graphql(ENROLLED, { code });
  render({ enrolledNode: data?.deviceAuthorization?.enrolledNode ?? null });
}

function watch() {
  stopWatching?.();
  const url = `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/graphql`;
  stopWatching = subscribe(
    url,
    { query: WATCH, variables: { code } },
    {
      next(result) {
        const view = result.data?.deviceAuthorizationStatus;
        if (!view) return;
        retryDelay = 1000;
        setLive('live');
        render(view);
      },
      complete() {
        stopWatching = undefined;
        setLive(false);
      },
      error() {
        stopWatching = undefined;
        if (device?.status !== 'pending') return setLive(false);
        setLive('retrying');
        setTimeout(watch, retryDelay);
        retryDelay = Math.min(retryDelay * 2, 15_000);
      },
    },
  );
}

async function signIn(event) {
  event.preventDefault();
  const email = $('email').value.trim();
  const passwordInput = $('password');
  const secondFactor = !$('second-factor').hidden;
  const factorCode = $('totp-code').value.replace(/\s/g, '');
  if (!email || !passwordInput.value) {
    showError('signin-error', 'Enter both your email and your password.');
    return (email ? passwordInput : $('email')).focus();
  }
  if (secondFactor && !factorCode) {
    showError('signin-error', 'Enter the code from your authenticator app, or a recovery code.');
    return $('totp-code').focus();
  }
  busy = true;
  renderControls();
  showError('signin-error', '');
  let next;
  try {
    // Six digits are a TOTP code; anything else typed there is a recovery code.
    const factor = !secondFactor ? {} : /^[0-9]{6}$/.test(factorCode) ? { totpCode: factorCode } : { recoveryCode: factorCode };
    const { data, error } = await graphql(SIGN_IN, { input: { email, password: passwordInput.value, ...factor } });
    if (data?.signIn?.secondFactorRequired) {
      $('second-factor').hidden = false;
      next = $('totp-code');
    } else if (data?.signIn) {
      passwordInput.value = '';
      $('totp-code').value = '';
      $('second-factor').hidden = true;
      await loadPerson();
    } else {
      showError('signin-error', error?.message ?? 'Signing in failed; try again.');
      next = secondFactor ? $('totp-code') : passwordInput;
    }
  } catch {
    showError('signin-error', 'The service could not be reached; try again.');
  } finally {
    busy = false;
    renderControls();
  }
  if (next) next.focus();
  else if (session) $('decide-heading').focus();
}

async function signOut(message) {
  if (session) await graphql(SIGN_OUT).catch(() => undefined);
  session = null;
  if (device) device.enrolledNode = null;
  renderControls();
  showError('decide-error', '');
  if (message) showError('signin-error', message);
  if (!$('signin').hidden) $('email').focus();
}

async function decide(action) {
  if (!session || busy) return;
  busy = true;
  renderControls();
  showError('decide-error', '');
  try {
    const { data, error } = await graphql(DECIDE, { code, action });
    const reason = error?.extensions?.code;
    if (data?.approveDeviceAuthorization) render({ status: data.approveDeviceAuthorization.status });
    else if (reason === 'authentication_error') await signOut('Your session has ended; sign in again.');
    else {
      if (reason === 'not_pending' && error.extensions.body?.current_status) render({ status: error.extensions.body.current_status });
      showError('decide-error', error?.message ?? 'The decision failed; try again.');
    }
  } catch {
    showError('decide-error', 'The service could not be reached; try again.');
  } finally {
    busy = false;
    renderControls();
  }
}

$('signin-form').addEventListener('submit', signIn);
$('signout').addEventListener('click', () => signOut());
$('approve').addEventListener('click', () => decide('approve'));
$('deny').addEventListener('click', () => decide('deny'));
renderControls();
load().catch(() => showError('page-error', 'The service could not be reached. Reload the page to try again.'));
