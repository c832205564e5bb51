import { useState } from 'react';

/**
 * Forward cursor paging over a GraphQL connection: the cursors of the pages before the one shown,
 * `after` being where it starts. A new `scope` (another tenant, another filter) starts again at
 * the first page, in the same render, so no query goes out with the previous scope's cursor.
 */
export function useCursorPages(scope: unknown) {
  const key = JSON.stringify(scope);
  const [held, setHeld] = useState<{ key: string; cursors: string[] }>({ key, cursors: [] });
  const cursors = held.key === key ? held.cursors : [];
  return {
    after: cursors.at(-1),
    /** Pages before the one shown. */
    before: cursors.length,
    next: (cursor: string) => setHeld({ key, cursors: [...cursors, cursor] }),
    previous: () => setHeld({ key, cursors: cursors.slice(0, -1) }),
  };
}

type Pages = ReturnType<typeof useCursorPages>;

/** Which items are shown ("Nodes 501 to 600, oldest first") and the buttons to the pages around it; nothing when all fit on one. */
export function PageButtons({
  pages,
  size,
  shown,
  pageInfo,
  what,
}: {
  pages: Pages;
  size: number;
  shown: number;
  pageInfo: { hasNextPage: boolean; endCursor?: string | null };
  /** What the items are and their order, e.g. "Nodes" and "oldest first". */
  what: [string, string];
}) {
  const { hasNextPage, endCursor } = pageInfo;
  if (pages.before === 0 && !hasNextPage) return null;
  const first = pages.before * size + 1;
  return (
    <div className="actions">
      <span className="note" role="status">
        {what[0]} {first} to {first + shown - 1}, {what[1]}
      </span>
      {pages.before > 0 && (
        <button type="button" onClick={pages.previous}>
          Previous {size}
        </button>
      )}
      {hasNextPage && endCursor && (
        <button type="button" onClick={() => pages.next(endCursor)}>
          Next {size}
        </button>
      )}
    </div>
  );
}
