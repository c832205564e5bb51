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
    operation: DeviceAuthorizationInfoDocument,
    variables: ({ query }) => ({ deviceCode: query.get('device_code') }),
    render: ({ device }) => device,
  }),
  defineRoute({
    method: 'POST',
    path: '/rest/oauth2/device/approve/1.0',
    operation: ApproveDeviceAuthorizationDocument,
    variables: ({ body }) => ({
      deviceCode: field(body, 'device_code') as string,
      action: field(body, 'action') as string,
    }),
    render: ({ decision }) => decision,
  }),
  defineRoute({
    method: 'POST',
    path: '/rest/oauth2/device/poll/1.0',
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
