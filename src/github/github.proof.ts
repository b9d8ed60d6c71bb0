/**
 * Linking a GitHub login, and proving it. A link is a claim: anyone can type `torvalds`. Nothing
 * is fetched, shown on the profile, or fed to GitHub Insight and the radar until the claim is
 * proven: the user puts a one-off code in their GitHub bio, and we read it back through GitHub's
 * public API (docs/decisions/0009-github-proof.md says why this proof and not OAuth).
 */
import { recordSecurityEvent, type Origin } from '../security-log/security-log.service.js';
import { randomBytes } from 'node:crypto';
import { type EntityManager, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { GithubAccount, GithubRepo } from './github.entity.js';
import { User } from '../users/user.entity.js';
import { badRequest, notFound } from '../kernel/problem.js';
import {
  GITHUB_LOGIN,
  type GithubClient,
  GithubNotFound,
  GithubRateLimited,
  type GithubUser,
} from './github.client.js';

const newChallenge = () => `shipyard-verify-${randomBytes(8).toString('hex')}`;

/**
 * Links `login` to the user, unverified, with a fresh code to prove it. Linking the login that is
 * already linked keeps it as it is (verified or not); linking another one drops the old login's data.
 */
export async function linkGithub(em: EntityManager, userId: string, login: string): Promise<GithubAccount> {
  if (!GITHUB_LOGIN.test(login)) throw badRequest(`'${login}' is not a GitHub login.`);
  const user = await em.findOne(User, { id: userId });
  if (!user) throw notFound('No such user.');
  let account = await em.findOne(GithubAccount, { user: userId });
  if (account && account.login.toLowerCase() === login.toLowerCase()) return account;
  if (account) {
    await em.nativeDelete(GithubRepo, { account: account.id }); // another account: its data goes
    em.remove(account);
    await em.flush();
  }
  account = em.create(GithubAccount, { user, login, challenge: newChallenge(), verifiedAt: null });
  user.githubLogin = null; // shown on the profile only once proven
  await em.flush();
  return account;
}

export type Verification = { verified: true; account: GithubAccount } | { verified: false; reason: string };

/**
 * Reads the linked login's bio from GitHub: if it holds the account's code, the login is proven
 * for the GitHub account that has it now (its id), and becomes the profile's. A login or GitHub
 * account proven by another Shipyard user before stops being theirs, since whoever controls the
 * bio now has shown that they control the GitHub account.
 */
export async function verifyGithub(
  em: EntityManager,
  client: GithubClient,
  userId: string,
  origin: Origin = {},
): Promise<Verification> {
  const account = await em.findOne(GithubAccount, { user: userId }, { populate: ['user'] });
  if (!account) return { verified: false, reason: 'Link a GitHub login first.' };
  if (account.verifiedAt) return { verified: true, account };
  // Every unproven account has its code: linkGithub gives one, losing a proof gives a new one, and
  // the migration gave the links older than the proof theirs.
  const code = account.challenge!;
  let user: GithubUser;
  try {
    user = await client.user(account.login);
  } catch (err) {
    return { verified: false, reason: unreachable(err, account.login) };
  }
  const bio = user.bio ?? '';
  if (!bio.includes(code)) {
    return {
      verified: false,
      reason: `The GitHub bio of ${account.login} does not contain ${code} yet. Add it on github.com/settings/profile and try again; GitHub can take a minute to show a new bio.`,
    };
  }
  // Two users proving the same login at once: the unique indexes let one commit, and the other
  // tries again, which makes its proof, the newer one, win. Each attempt starts from a fresh
  // fork: the failed one left its entities changed but unwritten.
  for (let attempt = 1; ; attempt++) {
    try {
      await em.fork().transactional(async (tem) => {
        await recordProof(tem, account.id, user.id);
        await recordSecurityEvent(tem, {
          userId,
          kind: 'github.linked',
          channel: 'web',
          ...origin,
          resource: `https://github.com/${account.login}`,
        });
      });
      break;
    } catch (err) {
      if (!(err instanceof UniqueConstraintViolationException) || attempt === 3) throw err;
    }
  }
  em.clear();
  return { verified: true, account: await em.findOneOrFail(GithubAccount, { id: account.id }) };
}

/**
 * Inside a transaction: marks the account proven for GitHub account `githubId`, and takes the
 * proof from any earlier holder of the login or the GitHub account.
 */
export async function recordProof(tem: EntityManager, accountId: string, githubId: number) {
  const mine = await tem.findOneOrFail(GithubAccount, { id: accountId }, { populate: ['user'] });
  const others = await tem.find(GithubAccount, {
    $or: [{ login: { $ilike: mine.login } }, { githubId }],
    verifiedAt: { $ne: null },
    id: { $ne: mine.id },
  });
  for (const other of others) await loseProof(tem, other);
  mine.verifiedAt = new Date();
  mine.githubId = githubId;
  mine.challenge = null;
  mine.user.githubLogin = mine.login;
  await tem.flush();
}

/**
 * The account is no longer proven: its login leaves the profile, the data fetched for it goes,
 * and it gets a fresh code so its user can prove it again. The caller flushes.
 */
export async function loseProof(em: EntityManager, account: GithubAccount): Promise<void> {
  account.verifiedAt = null;
  account.githubId = null;
  account.challenge = newChallenge();
  await em.nativeUpdate(User, { id: account.user.id }, { githubLogin: null });
  await em.nativeDelete(GithubRepo, { account: account.id });
  await em.flush(); // before another proof of the same login takes the unique index
}

function unreachable(err: unknown, login: string): string {
  if (err instanceof GithubNotFound) return `GitHub has no user '${login}'. Check the login and link it again.`;
  if (err instanceof GithubRateLimited)
    return `GitHub's rate limit is used up until ${err.resetAt.toISOString()}; try again after that.`;
  return 'GitHub could not be reached; try again in a moment.';
}
