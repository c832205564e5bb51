/** Started through src/start.cjs by src/start.test.ts: prints the process it runs in, and ends. */
console.log(JSON.stringify({ pid: process.pid, execArgv: process.execArgv }));
