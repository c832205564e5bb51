import type { HttpRoute } from '../../http/routes.js';
import { CONTROL_PATH, type ControlHub } from './hub.js';

/** The collector's control channel: a WebSocket upgrade only; a plain request to it is the server's 404. */
export const controlRoute = (control: ControlHub): HttpRoute => ({
  paths: [CONTROL_PATH],
  upgrade: (req, socket, head) => void control.handleUpgrade(req, socket, head),
});
