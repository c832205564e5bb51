/** Whether a Prisma write failed on a unique key (P2002): a concurrent writer inserted the same key first. */
export const isUniqueViolation = (error: unknown): boolean => (error as { code?: string } | null)?.code === 'P2002';
