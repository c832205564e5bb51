/**
 * Pages are paths under /console (the server answers index.html for each), so a page can be
 * bookmarked, reloaded and opened in a new tab; moving between them uses the History API.
 */
import { type AnchorHTMLAttributes, useSyncExternalStore } from 'react';

export const BASE = '/console';

const listeners = new Set<() => void>();
const notify = () => listeners.forEach((listener) => listener());
window.addEventListener('popstate', notify);

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

/** The path and query below /console, e.g. `/investigations?sort=recent`. */
const current = () => location.pathname.slice(BASE.length) + location.search || '/';

export function useLocation(): URL {
  const path = useSyncExternalStore(subscribe, current);
  return new URL(path, location.origin);
}

export function navigate(path: string, options: { replace?: boolean } = {}) {
  history[options.replace ? 'replaceState' : 'pushState'](null, '', BASE + path);
  notify();
}

/** A link within the console: an ordinary anchor (new tab, copy link) that navigates in place on a plain click. */
export function Link({ to, ...props }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  return (
    <a
      {...props}
      href={BASE + to}
      onClick={(event) => {
        props.onClick?.(event);
        if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        navigate(to);
      }}
    />
  );
}
