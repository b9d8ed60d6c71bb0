/**
 * The operator CLI: `bin/shipyard <command>` (or `npx shipyard`). JSON on stdout; on error a
 * message on stderr and a non-zero exit (2 for a usage mistake, 1 otherwise). It reaches the
 * database directly, so it runs on the server host only; it is never reachable over the network.
 */
import { parseArgs } from 'node:util';
import { DatabaseLockedError } from '../db/lock.js';
import { ProblemError } from '../kernel/problem.js';
import { SCOPE_IDS } from '../kernel/scopes.js';
import { UsageError, type Values } from './usage.js';
import type * as Commands from './commands.js';

/** What `help` prints: plain text, not JSON. */
class HelpText {
  constructor(readonly text: string) {}
}

type Command = { usage: string; run: (values: Values) => Promise<unknown> };

/** A command's work, loaded when it runs: the database, ORM and services are not loaded for `help`. */
const lazy =
  (name: keyof typeof Commands): Command['run'] =>
  async (values) =>
    ((await import('./commands.js'))[name] as Command['run'])(values);

const OPTIONS = {
  username: { type: 'string' },
  email: { type: 'string' },
  password: { type: 'string' },
  'display-name': { type: 'string' },
  admin: { type: 'boolean' },
  scopes: { type: 'string' },
  'expires-in-days': { type: 'string' },
  name: { type: 'string' },
  id: { type: 'string' },
  login: { type: 'string' },
  skills: { type: 'string' },
} as const;

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: 'serve                                   start the HTTP server (same as make run)',
    // bin/shipyard.mjs starts the server for a bare `serve`; it is configured by its environment.
    run: async () => {
      throw new UsageError('serve takes no options: the server reads its settings from the environment');
    },
  },
  worker: {
    usage: 'worker                                  run the webhook worker alone (PostgreSQL; see docs/webhooks.md)',
    // bin/shipyard.mjs starts the worker for a bare `worker`; it is configured by its environment.
    run: async () => {
      throw new UsageError('worker takes no options: it reads its settings from the environment');
    },
  },
  migrate: {
    usage: 'migrate                                 apply pending database migrations',
    run: lazy('migrate'),
  },
  'users create': {
    usage: 'users create --username U --email E [--password P] [--display-name N] [--skills a,b] [--admin]',
    run: lazy('usersCreate'),
  },
  'users set-password': {
    usage: 'users set-password --username U         read a new password from stdin (or a prompt); ends their sessions',
    run: lazy('usersSetPassword'),
  },
  'users disable': {
    usage: "users disable --username U              refuse the account's sign-ins and keys, on every instance at once",
    run: lazy('usersDisable'),
  },
  'users enable': { usage: 'users enable --username U', run: lazy('usersEnable') },
  'keys create': {
    usage: 'keys create --username U --scopes a,b --expires-in-days N [--name NAME]',
    run: lazy('keysCreate'),
  },
  'keys list': { usage: 'keys list --username U', run: lazy('keysList') },
  'keys revoke': { usage: 'keys revoke --id ID', run: lazy('keysRevoke') },
  'github link': {
    usage: 'github link --username U --login GITHUB_LOGIN  link, unverified; prints the code for the GitHub bio',
    run: lazy('githubLink'),
  },
  'github verify': {
    usage: 'github verify --username U              prove the link: the GitHub bio holds the code',
    run: lazy('githubVerify'),
  },
  'github sync': {
    usage: 'github sync [--username U]              sync now (every verified account when no --username)',
    run: lazy('githubSync'),
  },
};

const USAGE = `Usage: shipyard <command> [options]

${Object.values(COMMANDS)
  .map((c) => `  ${c.usage}`)
  .join('\n')}
  help [command]                          this text, or one command's

Environment: DATABASE_URL (PostgreSQL; default: the embedded database under DATA_DIR, ./.data),
GITHUB_API_URL and GITHUB_TOKEN (github verify, github sync).
Scopes: ${SCOPE_IDS.join(' ')}`;

/** `help`, `--help`, `-h`: the usage on stdout; `help <command>`: that command's line. */
function help(topic: string[]): string {
  const name = topic.join(' ');
  if (!name) return USAGE;
  const matching = Object.entries(COMMANDS).filter(([key]) => key === name || key.startsWith(`${name} `));
  if (matching.length === 0) throw new UsageError(`unknown command '${name}'`);
  return `Usage: shipyard ${matching.map(([, c]) => c.usage).join('\n       shipyard ')}`;
}

async function run(argv: string[]): Promise<unknown> {
  const [cmd, sub] = argv;
  if (cmd === 'help' || cmd === '--help' || cmd === '-h') return new HelpText(help(argv.slice(1)));
  const grouped = cmd === 'users' || cmd === 'keys' || cmd === 'github';
  const name = grouped ? `${cmd} ${sub ?? ''}`.trim() : (cmd ?? '');
  const command = COMMANDS[name];
  if (!command) throw new UsageError(cmd ? `unknown command '${name}'` : 'no command given');
  if (argv.includes('--help') || argv.includes('-h')) return new HelpText(help(name.split(' ')));
  const { values } = parseArgs({ args: argv.slice(grouped ? 2 : 1), strict: true, options: OPTIONS });
  return command.run(values);
}

run(process.argv.slice(2)).then(
  (out) => {
    if (out instanceof HelpText) process.stdout.write(`${out.text}\n`);
    else if (out !== undefined) process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  },
  (err: Error) => {
    if (err instanceof UsageError || (err as NodeJS.ErrnoException).code?.startsWith?.('ERR_PARSE_ARGS')) {
      process.stderr.write(`shipyard: ${err.message}\n\n${USAGE}\n`);
      process.exit(2);
    }
    const message =
      err instanceof ProblemError || err instanceof DatabaseLockedError ? err.message : `${err.name}: ${err.message}`;
    process.stderr.write(`shipyard: ${message}\n`);
    process.exit(1);
  },
);
