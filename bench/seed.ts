/**
 * Seeds the benchmark database at a realistic size (10k users, 20k public projects and 500
 * private ones, 200k milestones,
 * 100k posts, 5k jobs) with set-based SQL, then creates the bench user with a key. Prints JSON:
 * the token and the ids the benchmark reads. Idempotent: a seeded database is reused.
 */
import { openDatabase } from '../src/db/database.js';
import { createKey } from '../src/keys/keys.service.js';
import { SCOPE_IDS } from '../src/kernel/scopes.js';
import { cursorAfterId } from '../src/kernel/cursor.js';
import { projectList } from '../src/projects/projects.service.js';
import { User } from '../src/users/user.entity.js';
import { VOCABULARY } from './vocabulary.js';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('bench/seed.ts needs DATABASE_URL');
const db = await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 2 });
const em = db.orm.em.fork();
const [counted] = await em.execute<{ n: number }[]>('select count(*)::int as n from users');
const n = Number(counted?.n ?? 0);
const words = (seed: string, count: number) =>
  `(select string_agg((:vocab::text[])[1 + ((${seed} * 7919 + k * 104729 + ${seed} * k * 31) % ${VOCABULARY.length})], ' ') from generate_series(1, ${count}) k)`;
const text = (sql: string) => sql.replaceAll(':vocab', `array[${VOCABULARY.map((w) => `'${w}'`).join(',')}]`);

if (Number(n) < 10_000) {
  const t0 = Date.now();
  await em.execute(`insert into users (id, username, email, display_name, bio, skills, created_at)
    select gen_random_uuid(), 'user' || i, 'user' || i || '@bench.example', 'User ' || i, 'Builds things number ' || i,
           (array['typescript', 'rust', 'go', 'python'])[1 + i % 4 : 1 + i % 4], now() - (i || ' minutes')::interval
    from generate_series(1, 10000) i`);
  await em.execute(
    text(`insert into projects (id, owner_id, name, slug, tagline, description, stage, visibility, tags, links, looking_for_collaborators, wanted_skills, created_at, updated_at)
    select gen_random_uuid(), u.a[1 + i % 10000], 'Project ' || i, 'project-' || i, 'A tagline for project ' || i, ${words('i', 12)},
           (array['idea','building','launched','paused'])[1 + i % 4], case when i > 20000 then 'private' else 'public' end,
           (array['hardware','software','web'])[1 + i % 3 : 1 + i % 3], '[]', i % 3 = 0, (array['typescript','rust'])[1 + i % 2 : 1 + i % 2],
           now() - (i || ' seconds')::interval, now()
    from generate_series(1, 20500) i, (select array_agg(id order by id) a from users) u`),
  );
  await em.execute(`insert into milestones (id, project_id, title, description, status, position, created_at, updated_at)
    select gen_random_uuid(), p.id, 'Milestone ' || m, null, 'planned', m, now(), now()
    from (select id, row_number() over (order by id) r from projects) p cross join generate_series(1, 10) m where p.r <= 20000`);
  await em.execute(
    text(`insert into posts (id, author_id, kind, title, body, tags, media_ids, comment_count, reaction_count, created_at, updated_at)
    select gen_random_uuid(), u.a[1 + i % 10000], 'post', 'Post ' || i || ': ' || ${words('i', 4)}, ${words('i + 1', 25)},
           array['hardware','engines'], '{}', 0, 0, now() - (i || ' seconds')::interval, now()
    from generate_series(1, 100000) i, (select array_agg(id order by id) a from users) u`),
  );
  await em.execute(
    text(`insert into jobs (id, poster_id, title, company, description, remote_policy, employment_type, skills, apply_url, status, expires_at, created_at, updated_at)
    select gen_random_uuid(), u.a[1 + i % 10000], 'Engineer ' || i, 'Company ' || i, ${words('i', 10)}, 'remote', 'full_time', array['typescript'], 'https://jobs.example/' || i, 'open', now() + interval '30 days', now(), now()
    from generate_series(1, 5000) i, (select array_agg(id order by id) a from users) u`),
  );
  process.stderr.write(`seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
}
// The bench user owns one project with a 50-milestone roadmap.
let user = await em.findOne(User, { username: 'bench' });
if (!user) {
  user = em.create(User, { username: 'bench', email: 'bench@bench.example', displayName: 'Bench' });
  await em.flush();
}
const [project] = await em.execute<{ id: string }[]>(
  `select id from projects where owner_id = ? and slug = 'bench-roadmap'`,
  [user.id],
);
let projectId = project?.id;
if (!projectId) {
  const [row] = await em.execute<{ id: string }[]>(
    `insert into projects (id, owner_id, name, slug, tagline, description, stage, visibility, tags, links, looking_for_collaborators, wanted_skills, created_at, updated_at)
     values (gen_random_uuid(), ?, 'Bench roadmap', 'bench-roadmap', '', '', 'building', 'public', '{}', '[]', false, '{}', now(), now()) returning id`,
    [user.id],
  );
  projectId = row!.id;
  await em.execute(
    `insert into milestones (id, project_id, title, status, position, created_at, updated_at)
    select gen_random_uuid(), ?, 'Step ' || m, 'planned', m, now(), now() from generate_series(1, 50) m`,
    [projectId],
  );
}
/** The bench user's project with this slug, made empty the first time. */
async function ownProject(slug: string, name: string): Promise<string> {
  const ownerId = user!.id;
  const [found] = await em.execute<{ id: string }[]>(`select id from projects where owner_id = ? and slug = ?`, [
    ownerId,
    slug,
  ]);
  if (found) return found.id;
  const [made] = await em.execute<{ id: string }[]>(
    `insert into projects (id, owner_id, name, slug, tagline, description, stage, visibility, tags, links, looking_for_collaborators, wanted_skills, created_at, updated_at)
   values (gen_random_uuid(), ?, ?, ?, '', '', 'building', 'public', '{}', '[]', false, '{}', now(), now()) returning id`,
    [ownerId, name, slug],
  );
  return made!.id;
}
// A second project receives the POSTed milestones, so the roadmap read stays at 50.
const writeProjectId = await ownProject('bench-writes', 'Bench writes');
// The write baseline (bench/baselines.ts write) appends to a third project, so that the service's
// roadmap of bench-writes stays within the most a roadmap holds.
const baselineWriteProjectId = await ownProject('bench-baseline-writes', 'Bench baseline writes');
// A fourth takes the POSTs made with a webhook subscribed (the run subscribes its own receiver).
const hookedProjectId = await ownProject('bench-hooked-writes', 'Bench hooked writes');
await em.execute('delete from webhook_subscriptions where project_id = ?', [hookedProjectId]);
// And its events, with their deliveries: a run stopped before its backlog arrived would otherwise
// hand the next run's receiver that backlog (the relay gives an event to the subscriptions active
// when it passes), and the next run would count it as its own.
await em.execute('delete from webhook_events where project_id = ?', [hookedProjectId]);
// Each run writes into bench-writes; start it empty so POST timings do not drift between runs.
await em.execute('delete from milestones where project_id in (?, ?, ?)', [
  writeProjectId,
  baselineWriteProjectId,
  hookedProjectId,
]);
// For BENCH_MORE's reads: the bench user's skills (the radar ranks from them; three of the seed's
// four, so it scores its full 500 candidates of each kind), a public post of theirs with 30
// comments, a linked GitHub account, and ids of a job, a milestone and a seeded user with
// projects and posts.
await em.execute(`update users set skills = '{go,rust,typescript}' where id = ?`, [user.id]);
const [post] = await em.execute<{ id: string }[]>(
  `select id from posts where author_id = ? and title = 'Bench comments'`,
  [user.id],
);
const postId =
  post?.id ??
  (
    await em.execute<{ id: string }[]>(
      `insert into posts (id, author_id, kind, title, body, tags, media_ids, comment_count, reaction_count, created_at, updated_at)
   values (gen_random_uuid(), ?, 'post', 'Bench comments', 'Thirty comments below.', '{}', '{}', 30, 0, now(), now()) returning id`,
      [user.id],
    )
  )[0]!.id;
if (!post) {
  await em.execute(
    `insert into comments (id, post_id, author_id, body, depth, reply_count, created_at, updated_at)
    select gen_random_uuid(), ?, u.id, 'A comment by ' || u.username, 0, 0, now(), now() from (select id, username from users where username like 'user%' order by username limit 30) u`,
    [postId],
  );
}
const [comment] = await em.execute<{ id: string }[]>('select id from comments where post_id = ? order by id limit 1', [
  postId,
]);
// A linked GitHub account with 100 synced repositories (52 weeks of commits each) for the GitHub Insight reads.
const [account] = await em.execute<{ id: string }[]>('select id from github_accounts where user_id = ?', [user.id]);
if (!account) {
  const [linked] = await em.execute<{ id: string }[]>(
    `insert into github_accounts (id, user_id, login, sync_status, synced_at, created_at) values (gen_random_uuid(), ?, 'bench-gh', 'ok', now(), now()) returning id`,
    [user.id],
  );
  await em.execute(
    `insert into github_repos (id, account_id, name, full_name, html_url, stars, forks, language, topics, pushed_at, fork, archived, languages, weekly_commits)
    select gen_random_uuid(), ?, 'repo' || i, 'bench-gh/repo' || i, 'https://github.com/bench-gh/repo' || i, i % 50, i % 7, 'TypeScript', '{}',
           now() - (i || ' hours')::interval, i % 10 = 0, false, jsonb_build_object('TypeScript', 1000 * i, 'Rust', 300 * i, 'Shell', 20 * i),
           (select jsonb_agg(jsonb_build_object('week', to_char(date_trunc('week', now()) - (w || ' weeks')::interval, 'YYYY-MM-DD'), 'commits', (i + w) % 5) order by w desc)
            from generate_series(0, 51) w)
    from generate_series(1, 100) i`,
    [linked!.id],
  );
}
// What an agent's context would pay for most (MCP answer sizes): a private project of the bench
// user with 100 milestones of 5,000-character descriptions and 30 build logs of 20,000 characters.
const [agent] = await em.execute<{ id: string }[]>(
  `select id from projects where owner_id = ? and slug = 'bench-agent'`,
  [user.id],
);
let agentProjectId = agent?.id;
if (!agentProjectId) {
  const [row] = await em.execute<{ id: string }[]>(
    `insert into projects (id, owner_id, name, slug, tagline, description, stage, visibility, tags, links, looking_for_collaborators, wanted_skills, created_at, updated_at)
     values (gen_random_uuid(), ?, 'Bench agent', 'bench-agent', '', repeat('lorem ipsum ', 400), 'building', 'private', '{}', '[]', false, '{}', now(), now()) returning id`,
    [user.id],
  );
  agentProjectId = row!.id;
  await em.execute(
    `insert into milestones (id, project_id, title, description, status, position, created_at, updated_at)
    select gen_random_uuid(), ?, 'Step ' || m, left(repeat('lorem ipsum dolor sit amet ', 200), 5000), 'planned', m, now(), now()
    from generate_series(1, 100) m`,
    [agentProjectId],
  );
  await em.execute(
    `insert into posts (id, author_id, project_id, kind, title, body, tags, media_ids, comment_count, reaction_count, created_at, updated_at)
    select gen_random_uuid(), ?, ?, 'build_log', 'Week ' || i, left(repeat('lorem ipsum dolor sit amet ', 800), 20000), '{}', '{}', 0, 0, now() - (i || ' days')::interval, now()
    from generate_series(1, 30) i`,
    [user.id, agentProjectId],
  );
}
const [job] = await em.execute<{ id: string }[]>('select id from jobs order by id desc limit 1');
const [milestone] = await em.execute<{ id: string }[]>(
  'select id from milestones where project_id = ? and position = 1',
  [projectId],
);
// Then vacuum, every run: the state autovacuum keeps a live database in (hint bits, visibility map,
// statistics, no dead rows). Autovacuum may be off (it is on the bench machine), and without this
// each run left the previous ones' milestones as dead rows for the write roadmap's count to walk
// past (22 ms against 0.3 ms vacuumed, after a soak's 23k) and its pages never all-visible.
await em.execute('vacuum analyze');
// Page 1,000 at 20 per page starts after the 19,980th project the bench user sees: its cursor is that project's id
// (a full page of 20 follows: the user sees 20,000 seeded public projects and its own three).
const [page1000] = await em.execute<{ id: string }[]>(
  `select id from projects where visibility = 'public' or owner_id = ? order by id desc offset ${999 * 20 - 1} limit 1`,
  [user.id],
);
const { token } = await createKey(em, { userId: user.id, name: 'bench', scopes: [...SCOPE_IDS], expiresInDays: 1 });
// Another user's key: the noisy neighbour's reader (bench/noisy-neighbour.ts).
const neighbour = await em.findOneOrFail(User, { username: 'user41' });
const { token: neighbourToken } = await createKey(em, {
  userId: neighbour.id,
  name: 'bench-neighbour',
  scopes: ['profile.read', 'content.read'],
  expiresInDays: 1,
});
await db.close();
process.stdout.write(
  `${JSON.stringify({
    token,
    neighbourToken,
    userId: user.id,
    projectId,
    writeProjectId,
    baselineWriteProjectId,
    hookedProjectId,
    agentProjectId,
    // The cursor GET /projects (no filters) would give after that project.
    page1000Cursor: cursorAfterId(page1000!, projectList(undefined, undefined)),
    postId,
    commentId: comment!.id,
    jobId: job!.id,
    milestoneId: milestone!.id,
    username: 'user42',
  })}\n`,
);
