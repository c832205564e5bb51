import { writeFileSync } from 'node:fs';
import { printedSchema } from '../src/graphql/schema.js';

writeFileSync(new URL('../schema/schema.graphql', import.meta.url), printedSchema());
