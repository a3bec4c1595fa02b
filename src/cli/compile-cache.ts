import { enableCompileCache } from 'node:module';

/*
 * Imported first by the CLI's entry: a command's start-up is its latency, and without a code cache every
 * run compiles NestJS 12's ES modules (and the rest) again. Node keeps the cache in its default place
 * (node-compile-cache in the system temp directory; NODE_COMPILE_CACHE moves it,
 * NODE_DISABLE_COMPILE_CACHE=1 turns it off). About 130 ms of a database command (docs/benchmarks-history.md).
 */
enableCompileCache();
