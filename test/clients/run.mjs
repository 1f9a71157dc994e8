// Runs every client check against taskgate and prints one line per check; exit status 1 when any
// fails. scripts/clients sets the environment (see lib.mjs) and starts the servers.
//   node run.mjs [FILTER]   (only the checks whose "client transport name" contains FILTER)
import { runChecks } from "./lib.mjs";
import * as sdk1 from "./sdk-v1.mjs";
import * as v2 from "./client-v2.mjs";
import * as inspector from "./inspector.mjs";

const failed = await runChecks([...sdk1.checks, ...v2.checks, ...inspector.checks], {
  filter: process.argv[2],
  concurrency: Number(process.env.CLIENTS_CONCURRENCY ?? 4),
});
process.exit(failed > 0 ? 1 : 0);
