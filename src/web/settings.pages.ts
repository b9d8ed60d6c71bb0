/**
 * Settings → Profile (display name, bio, location, website, skills) and Settings → GitHub
 * (link a login, prove it, sync now). The same services as the CLI and the API read.
 */
import { webOrigin } from './web-context.js';
import type { Request, Response } from 'express';
import { updateProfile } from '../users/users.service.js';
import { GithubAccount } from '../github/github.entity.js';
import { syncGithubAccount } from '../github/github.sync.js';
import { linkGithub, verifyGithub } from '../github/github.proof.js';
import type { GithubClient } from '../github/github.client.js';
import { ProblemError } from '../kernel/problem.js';
import { errorList, html, page, userText, utcMinute } from './views.js';

const str = (v: unknown) => (typeof v === 'string' ? v : '');

type Shown = { status?: number; errors?: string[]; notice?: string };
type PageUser = NonNullable<NonNullable<Request['web']>['user']>;

const flash = ({ errors = [], notice }: Shown) =>
  html`${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}${errorList(errors)}`;

function profileView(u: PageUser, csrf: string, shown: Shown) {
  return html`
      <h1>Settings → Profile</h1>
      ${flash(shown)}
      <form method="post" action="/settings/profile">
        <input type="hidden" name="_csrf" value="${csrf}">
        <label for="p-name">Display name</label><input type="text" id="p-name" name="displayName" maxlength="100" required value="${u.displayName}">
        <label for="p-bio">Bio</label><textarea id="p-bio" name="bio" rows="4" maxlength="2000" class="wide">${u.bio}</textarea>
        <label for="p-location">Location</label><input type="text" id="p-location" name="location" maxlength="200" value="${u.location ?? ''}">
        <label for="p-website">Website</label><input type="text" id="p-website" name="website" inputmode="url" maxlength="500" value="${u.website ?? ''}">
        <label for="p-skills">Skills</label><input type="text" id="p-skills" name="skills" value="${u.skills.join(', ')}" aria-describedby="p-skills-hint">
        <p class="hint" id="p-skills-hint">Comma-separated, e.g. typescript, rust, 3d printing. The Opportunity Radar ranks jobs and projects with them.</p>
        <p><button type="submit">Save profile</button></p>
      </form>`;
}

function githubView(account: GithubAccount | null, csrf: string, shown: Shown) {
  const synced = account?.syncedAt ? html`, last synced ${utcMinute(account.syncedAt)}` : '';
  const hidden = html`<input type="hidden" name="_csrf" value="${csrf}">`;
  const status = !account
    ? html`<p>No GitHub account linked yet. GitHub Insight and the Opportunity Radar use your public repositories and languages.</p>`
    : account.verifiedAt
      ? html`<p>Linked to <strong>${userText(account.login)}</strong> (verified). Sync status: <strong>${account.syncStatus}</strong>${synced}.
            ${account.syncMessage ? html`<br><span class="hint">${account.syncMessage}</span>` : ''}</p>
            <form method="post" action="/settings/github/sync">${hidden}<button type="submit">Sync now</button></form>`
      : html`<p>Linked to <strong>${userText(account.login)}</strong>, <strong>unverified</strong>. Until you prove the login is yours,
            it is not shown on your profile and nothing is read from it.</p>
            <ol>
              <li>Add this code anywhere in your bio on <a href="https://github.com/settings/profile">GitHub → Settings → Public profile</a>:
                <code id="gh-code">${account.challenge ?? ''}</code></li>
              <li>Choose <strong>Verify</strong>. Once verified you can take the code out of your bio.</li>
            </ol>
            <form method="post" action="/settings/github/verify">${hidden}<button type="submit">Verify</button></form>`;
  return html`
      <h1>Settings → GitHub</h1>
      ${flash(shown)}
      ${status}
      <form method="post" action="/settings/github">
        ${hidden}
        <label for="gh-login">GitHub login</label>
        <input type="text" id="gh-login" name="login" maxlength="39" required value="${account?.login ?? ''}">
        <p><button type="submit">${account ? 'Link another login' : 'Link'}</button></p>
      </form>`;
}

export function settingsPages(github: GithubClient) {
  function profile(req: Request, res: Response, shown: Shown = {}): void {
    const { user, csrf } = req.web!;
    res
      .status(shown.status ?? 200)
      .type('html')
      .send(page('Profile', user, csrf, profileView(user!, csrf, shown)));
  }

  async function saveProfile(req: Request, res: Response): Promise<void> {
    const b = req.body as Record<string, unknown>;
    try {
      await updateProfile(req.em, req.web!.user!.id, {
        displayName: str(b.displayName),
        bio: str(b.bio),
        location: str(b.location),
        website: str(b.website),
        skills: str(b.skills)
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      });
      profile(req, res, { notice: 'Your profile is saved.' });
    } catch (err) {
      if (err instanceof ProblemError && err.status === 400)
        return profile(req, res, { status: 400, errors: [err.detail] });
      throw err;
    }
  }

  async function githubPage(req: Request, res: Response, shown: Shown = {}): Promise<void> {
    const { user, csrf } = req.web!;
    const account = await req.em.findOne(GithubAccount, { user: user!.id });
    res
      .status(shown.status ?? 200)
      .type('html')
      .send(page('GitHub', user, csrf, githubView(account, csrf, shown)));
  }

  async function link(req: Request, res: Response): Promise<void> {
    try {
      const login = str((req.body as Record<string, unknown>).login).trim();
      const account = await linkGithub(req.em, req.web!.user!.id, login);
      await githubPage(req, res, {
        notice: account.verifiedAt
          ? `${account.login} is already linked and verified.`
          : `Linked to ${account.login}. Prove it is yours with the code below.`,
      });
    } catch (err) {
      if (err instanceof ProblemError && err.status === 400)
        return githubPage(req, res, { status: 400, errors: [err.detail] });
      throw err;
    }
  }

  async function verify(req: Request, res: Response): Promise<void> {
    const result = await verifyGithub(req.em, github, req.web!.user!.id, webOrigin(req));
    if (!result.verified) return githubPage(req, res, { status: 400, errors: [result.reason] });
    const synced = await syncGithubAccount(req.em, github, result.account.id);
    const notice = `Verified: ${synced.login} is yours. ${
      synced.syncStatus === 'ok'
        ? 'Its repositories are synced.'
        : `The first sync did not finish: ${synced.syncMessage ?? synced.syncStatus}.`
    } You can take the code out of your GitHub bio.`;
    await githubPage(req, res, { notice });
  }

  async function sync(req: Request, res: Response): Promise<void> {
    const account = await req.em.findOne(GithubAccount, { user: req.web!.user!.id });
    if (!account) return githubPage(req, res, { status: 400, errors: ['Link a GitHub login first.'] });
    if (!account.verifiedAt)
      return githubPage(req, res, {
        status: 400,
        errors: ['Verify the login first: nothing is read from an unproven login.'],
      });
    const synced = await syncGithubAccount(req.em, github, account.id);
    const notice =
      synced.syncStatus === 'ok' ? 'Synced.' : `The sync did not finish: ${synced.syncMessage ?? synced.syncStatus}.`;
    await githubPage(req, res, { notice });
  }

  return {
    profile: (req: Request, res: Response) => profile(req, res),
    saveProfile,
    github: (req: Request, res: Response) => githubPage(req, res),
    link,
    verify,
    sync,
  };
}
