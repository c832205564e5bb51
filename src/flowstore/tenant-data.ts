import { FLOWS_TABLE } from './ddl.js';
import type { FlowEngine } from './engine.js';

/**
 * Removes every flow of a tenant (its deployment was deleted). A lightweight DELETE: rows vanish
 * from queries at once and are purged by the next merge.
 */
export async function deleteTenantFlows(engine: FlowEngine, customerId: string): Promise<void> {
  await engine.command(`/* delete_tenant_flows */ DELETE FROM ${FLOWS_TABLE} WHERE customer_id = {customerId:String}`, { customerId });
}
