/**
 * The address people reach this server at (PUBLIC_URL), for the URLs an answer hands out: a
 * project's public page and feeds, a person's. Kept per ORM, as `usePreparedStatements` keeps its
 * setting: every request's entity manager is a fork of its server's ORM and shares its
 * configuration, so a service finds its server's address from the entity manager it was given,
 * even with several servers (and addresses) in one process.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

const sites = new WeakMap<object, string>();

/** From now on, answers read through `orm` build public URLs on `site` (no trailing slash). */
export function usePublicSite(orm: { config: object }, site: string): void {
  sites.set(orm.config, site.replace(/\/$/, ''));
}

/** The public address of the server `em` belongs to; a server that never said one is on localhost. */
export const publicSiteOf = (em: EntityManager): string => sites.get(em.config) ?? 'http://localhost';
