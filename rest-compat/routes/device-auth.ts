import {
  ApproveDeviceAuthorizationDocument,
  DeviceAuthorizationInfoDocument,
  PollDeviceAuthorizationDocument,
  StartDeviceAuthorizationDocument,
} from '../../src/generated/operations.js';
import { RawResponse, defineRoute, field, type Route } from '../route.js';

/** Device authorization (api-spec.md section 4, OAuth2; docs/device-flow.md). */
export const deviceAuthRoutes: Route[] = [
  defineRoute({
    method: 'POST',
    path: '/rest/oauth2/device/1.0',
    access: 'public',
    operation: StartDeviceAuthorizationDocument,
    variables: ({ body }) => ({
      hostname: field(body, 'hostname') as string,
      machineId: field(body, 'machine_id') as string,
      nodeId: field(body, 'node_id') as string,
    }),
    render: ({ grant }) => grant,
  }),
  defineRoute({
    method: 'GET',
    path: '/rest/oauth2/device/approve/1.0',
    access: 'public',
    operation: DeviceAuthorizationInfoDocument,
    // The user code (what the approval link carries) or the documented device_code.
    variables: ({ query }) => ({ userCode: query.get('user_code'), deviceCode: query.get('device_code') }),
    // The documented body; `user_code` only when looked up by it, and then `device_code` is null.
    render: ({ device: { user_code, ...device } }) => ({ ...device, ...(user_code !== null && { user_code }) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/rest/oauth2/device/approve/1.0',
    access: 'token',
    operation: ApproveDeviceAuthorizationDocument,
    variables: ({ body }) => ({
      userCode: field(body, 'user_code') as string,
      deviceCode: field(body, 'device_code') as string,
      action: field(body, 'action') as string,
    }),
    render: ({ decision }) => decision,
  }),
  defineRoute({
    method: 'POST',
    path: '/rest/oauth2/device/poll/1.0',
    access: 'public',
    operation: PollDeviceAuthorizationDocument,
    variables: ({ body }) => ({ deviceCode: field(body, 'device_code') as string }),
    // The documented body, with `access_key` and `node_id` only when present. A poll sooner than
    // poll_interval keeps that body and adds `slow_down: true` and a Retry-After header.
    render: ({ poll }) => {
      const body = {
        status: poll.status,
        ...(poll.access_key !== null && { access_key: poll.access_key }),
        ...(poll.node_id !== null && { node_id: poll.node_id }),
      };
      if (!poll.slow_down) return body;
      const text = JSON.stringify({ ...body, slow_down: true });
      return new RawResponse(200, { 'content-type': 'application/json; charset=utf-8', 'retry-after': String(poll.poll_interval) }, text);
    },
  }),
];
