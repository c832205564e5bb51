import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.js';
import '../tenancy/tenancy.schema.js';
import '../modules/oauth/oauth.schema.js';
import '../modules/deployments/deployments.schema.js';
import '../modules/device-auth/device-auth.schema.js';
import '../modules/collector/collector.schema.js';
import '../modules/profiles/profiles.schema.js';
import '../modules/nodes/nodes.schema.js';
import '../modules/control/control.schema.js';
import '../modules/events/events.schema.js';
import '../modules/automation/automation.schema.js';
import '../modules/explore/explore.schema.js';
import '../modules/networks/networks.schema.js';
import '../modules/search/search.schema.js';
import '../modules/investigations/investigations.schema.js';
import '../modules/audit/audit.schema.js';
import '../modules/investigations/triage.schema.js';
import '../modules/users/users.schema.js';
import '../modules/users/oidc.schema.js';
import '../modules/api-clients/api-clients.schema.js';

export const schema = builder.toSchema();

/** What schema/schema.graphql holds; a test fails when the committed copy differs. */
export const printedSchema = () => printSchema(lexicographicSortSchema(schema)) + '\n';
