/**
 * One process at a time on an embedded database directory. Two PGlite processes on one
 * directory each work on their own copy and the last to close silently wins, so the server
 * and the CLI take this lock first and refuse clearly when another live process holds it.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

export class DatabaseLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly holder: { pid: number; command?: string },
    /** Who tried to open it: a second server may take a directory of its own; a CLI command must reach the server's. */
    opener = 'shipyard',
  ) {
    super(
      `The embedded database at ${dir} is in use by another process (pid ${holder.pid}` +
        `${holder.command ? `, ${holder.command}` : ''}). ${
          opener === 'shipyard serve'
            ? 'Stop it first, give this server a directory of its own (DATA_DIR=…), or point DATABASE_URL at a PostgreSQL server.'
            : 'Stop it first, then run the command again on the same directory, or point DATABASE_URL at a PostgreSQL server.'
        }`,
    );
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export type DirLock = { release: () => void };

export function lockDirectory(dir: string, command: string): DirLock {
  const path = `${dir}/shipyard.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, command, since: new Date().toISOString() }));
      closeSync(fd);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        process.off('exit', release);
        try {
          unlinkSync(path);
        } catch {
          // already gone: nothing to release
        }
      };
      process.on('exit', release);
      return { release };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let holder: { pid: number; command?: string } = { pid: 0 };
      try {
        holder = JSON.parse(readFileSync(path, 'utf8'));
      } catch {
        // unreadable lock file: treat as stale
      }
      if (holder.pid && holder.pid !== process.pid && alive(holder.pid))
        throw new DatabaseLockedError(dir, holder, command);
      unlinkSync(path); // stale: its process is gone
    }
  }
  throw new Error(`could not take the lock ${path}`);
}
