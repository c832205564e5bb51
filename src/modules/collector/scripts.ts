import { readFileSync } from 'node:fs';

/**
 * install.sh and uninstall.sh live beside this file as plain Bash (so they can be read, linted
 * and run as they are); the server fills in `{base_url}` and the default channel.
 */
const template = (name: string) => readFileSync(new URL(`./scripts/${name}`, import.meta.url), 'utf8');
const templates = { install: template('install.sh'), uninstall: template('uninstall.sh') };

/** One shell word whatever the value holds: single quotes, with `'` written as `'\''`. */
export const shellQuote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

const fill = (text: string, values: Record<string, string>) =>
  text.replace(/__PROPHET_([A-Z_]+)__/g, (whole, name: string) => (name in values ? shellQuote(values[name]) : whole));

export const installScript = (options: { baseUrl: string; defaultChannel: string }) =>
  fill(templates.install, { BASE_URL: options.baseUrl, DEFAULT_CHANNEL: options.defaultChannel });

export const uninstallScript = (options: { baseUrl: string }) => fill(templates.uninstall, { BASE_URL: options.baseUrl });
