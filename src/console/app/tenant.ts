import { useState } from 'react';
import type { Tenant, User } from './session.js';

const STORAGE_KEY = 'console.tenant';

/**
 * The tenant the person acts on: an MSP's own or one of its children (`me.tenants`). The console
 * remembers the choice itself (the server names the tenant per field), per browser; a remembered
 * tenant the person no longer has falls back to their own.
 */
export function useTenant(user: User): [Tenant, (customerId: string) => void] {
  const find = (customerId: string | null) => user.tenants.find((t) => t.customerId === customerId);
  const [tenant, setTenant] = useState<Tenant>(() => find(localStorage.getItem(STORAGE_KEY)) ?? user.customer);
  return [
    tenant,
    (customerId) => {
      const chosen = find(customerId);
      if (!chosen) return;
      localStorage.setItem(STORAGE_KEY, chosen.customerId);
      setTenant(chosen);
    },
  ];
}
