// The device approval page: shows the user code the link carries (for the operator to compare
// with the device's screen) and what the device sent, follows its status live over graphql-ws,
// and lets a signed-in operator approve or deny it, warning when the machine is already enrolled
// in their tenant. The link never holds the device code, so this page cannot poll for the key.
// Only the bearer token is kept (in sessionStorage, for this tab); the client secret goes to the
// token endpoint once.
import { subscribe } from './graphql-ws.js';

const SESSION_KEY = 'console.session';
const TOKEN_PATH = '/rest/oauth2/token/1.0';
const APPROVE_PATH = '/rest/oauth2/device/approve/1.0';
const FIELDS = 'userCode hostname machineId nodeId status createdAt expiresAt';
const DESCRIBE = `query DeviceApprovalPage($code: String) { deviceAuthorization(userCode: $code) { ${FIELDS} } }`;
const WATCH = `subscription DeviceApprovalStatus($code: String) { deviceAuthorizationStatus(userCode: $code) { ${FIELDS} } }`;
const ENROLLED = 'query DeviceApprovalEnrolledNode($code: String) { deviceAuthorization(userCode: $code) { enrolledNode { id hostname lastSeenAt } } }';
const VIEWER = 'query ConsoleViewer { viewer { customerId clientId } }';
const VIEWER_TENANT = 'query ConsoleViewerTenant { viewerTenant { name } }';

const STATUS_TEXT = {
  loading: 'Loading…',
  pending: 'Waiting for approval',
  approved: 'Approved. The device receives its credentials on its next poll.',
  denied: 'Denied. The device will not be enrolled.',
  expired: 'Expired. Start the enrolment again on the device.',
  unknown: 'Unknown code',
};

const SIGNIN_FAILED = {
  401: 'That client ID and secret were not accepted.',
  429: 'Too many sign-in attempts from your address or for this client ID; wait a minute and try again.',
};

const $ = (id) => document.getElementById(id);
const code = (new URLSearchParams(location.search).get('user_code') ?? '').trim();
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

let device;
let session = loadSession();
let busy = false;
let stopWatching;
let retryDelay = 1000;
let ticker;

async function request(method, path, { body, token } = {}) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
  });
  let data = null;
  try {
    data = await res.json();
  } catch {
    /* an empty or non-JSON body: the status says enough */
  }
  return { status: res.status, data };
}

const graphql = (query, variables = {}, token) => request('POST', '/graphql', { body: { query, variables }, token });

// --- session: the token only, for this tab ---

function loadSession() {
  try {
    const saved = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null');
    if (saved && typeof saved.token === 'string' && saved.expiresAt * 1000 > Date.now() + 5000) return saved;
  } catch {
    /* unreadable: start signed out */
  }
  sessionStorage.removeItem(SESSION_KEY);
  return null;
}

function saveSession(next) {
  session = next;
  if (next) sessionStorage.setItem(SESSION_KEY, JSON.stringify(next));
  else sessionStorage.removeItem(SESSION_KEY);
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
  if (session) {
    setText('who-client', session.clientId);
    setText('who-tenant', session.tenantName ? `${session.tenantName} (${session.customerId})` : session.customerId);
  }
  renderEnrolled();
  $('approve').disabled = busy || !pending;
  $('deny').disabled = busy || !pending;
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
  const { data } = await graphql(DESCRIBE, { code });
  const view = data?.data?.deviceAuthorization;
  if (!view) {
    setStatus('unknown');
    const reason = data?.errors?.[0]?.extensions?.code;
    return showError(
      'page-error',
      reason === 'not_found'
        ? 'This code is unknown. Check that the link is complete, or start the enrolment again on the device.'
        : reason === 'rate_limited'
          ? 'Too many lookups from your address; wait a minute and reload the page.'
          : `The device could not be loaded (${data?.errors?.[0]?.message ?? 'network error'}).`,
    );
  }
  render(view);
  if (view.status === 'pending') watch();
  await checkEnrolled();
}

// With a session: is this machine id already a node of the operator's tenant? Asked again after
// each sign-in, since the answer depends on the tenant.
async function checkEnrolled() {
  if (!session || !device) return;
  const { data } = await graphql(ENROLLED, { code }, session.token);
  render({ enrolledNode: data?.data?.deviceAuthorization?.enrolledNode ?? null });
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
  const clientId = $('client-id').value.trim();
  const secretInput = $('client-secret');
  if (!clientId || !secretInput.value) {
    showError('signin-error', 'Enter both the client ID and the client secret.');
    return (clientId ? secretInput : $('client-id')).focus();
  }
  busy = true;
  renderControls();
  showError('signin-error', '');
  try {
    const token = await request('POST', TOKEN_PATH, { body: { client_id: clientId, client_secret: secretInput.value } });
    secretInput.value = '';
    if (token.status !== 200) {
      showError('signin-error', SIGNIN_FAILED[token.status] ?? 'Signing in failed; try again.');
      return secretInput.focus();
    }
    const { access_token: accessToken, expires_at: expiresAt } = token.data;
    const viewer = (await graphql(VIEWER, {}, accessToken)).data?.data?.viewer;
    const tenant = (await graphql(VIEWER_TENANT, {}, accessToken)).data?.data?.viewerTenant;
    saveSession({
      token: accessToken,
      expiresAt,
      clientId: viewer?.clientId ?? clientId,
      customerId: viewer?.customerId ?? '',
      tenantName: tenant?.name ?? null,
    });
    $('client-id').value = '';
    await checkEnrolled();
  } catch {
    showError('signin-error', 'The service could not be reached; try again.');
  } finally {
    busy = false;
    renderControls();
  }
  if (session) $('decide-heading').focus();
}

function signOut(message) {
  saveSession(null);
  if (device) device.enrolledNode = null;
  renderControls();
  showError('decide-error', '');
  if (message) showError('signin-error', message);
  if (!$('signin').hidden) $('client-id').focus();
}

async function decide(action) {
  if (!session || busy) return;
  busy = true;
  renderControls();
  showError('decide-error', '');
  try {
    const res = await request('POST', APPROVE_PATH, { body: { user_code: code, action }, token: session.token });
    if (res.status === 200) render({ status: res.data.status });
    else if (res.status === 401) signOut('Your sign-in has expired; sign in again.');
    else {
      if (res.status === 409 && res.data?.current_status) render({ status: res.data.current_status });
      showError('decide-error', res.data?.message ?? `The decision failed (HTTP ${res.status}).`);
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
