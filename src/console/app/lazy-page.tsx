import { type ComponentType, Suspense, lazy } from 'react';

/**
 * A page whose code (and libraries, such as the charts) is downloaded when it is first opened,
 * keeping the console's first load small.
 */
export function lazyPage<P extends object>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  const Page = lazy(async () => ({ default: await load() }));
  return function LazyPage(props: P) {
    return (
      <Suspense fallback={<p role="status">Loading the page…</p>}>
        <Page {...props} />
      </Suspense>
    );
  };
}
