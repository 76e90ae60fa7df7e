// Loaded with `node --import` into a server the bench spawns that has no option of its own for it
// (Portkey): it exits when the pipe to its stdin closes, so a bench killed outright (SIGKILL, the
// OOM killer: no handler runs) still takes it down, as the simulator's --exit-with-stdin does.
process.stdin.once('end', () => process.exit(0)).once('close', () => process.exit(0));
process.stdin.resume();
