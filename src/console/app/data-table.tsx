import type { ReactNode } from 'react';

/** A table of rows under plain column headers; the caption names it for screen readers (shown when `showCaption`). */
export function DataTable({
  caption,
  columns,
  className,
  showCaption,
  children,
}: {
  caption: ReactNode;
  columns: string[];
  className?: string;
  showCaption?: boolean;
  children: ReactNode;
}) {
  return (
    <table className={className ? `data ${className}` : 'data'}>
      <caption className={showCaption ? undefined : 'visually-hidden'}>{caption}</caption>
      <thead>
        <tr>
          {columns.map((column) => (
            <th scope="col" key={column}>
              {column}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
