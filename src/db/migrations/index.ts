// Every migration, in order. Explicit (no folder discovery), so the same list runs on the
// embedded database and on PostgreSQL. Append; never edit one that has shipped.
import { Migration20261122000000_core } from './Migration20261122000000_core.js';
import { Migration20261122162636_comments } from './Migration20261122162636_comments.js';
import { Migration20261122170000_search } from './Migration20261122170000_search.js';
import { Migration20261122171000_media } from './Migration20261122171000_media.js';
import { Migration20261122172000_post_media } from './Migration20261122172000_post_media.js';
import { Migration20261122172001_reactions } from './Migration20261122172001_reactions.js';
import { Migration20261122172002_user_avatar } from './Migration20261122172002_user_avatar.js';
import { Migration20261122172003_jobs_and_profiles } from './Migration20261122172003_jobs_and_profiles.js';
import { Migration20261122172004_github } from './Migration20261122172004_github.js';
import { Migration20261122172005_idempotency } from './Migration20261122172005_idempotency.js';
import { Migration20261122201111_sessions } from './Migration20261122201111_sessions.js';
import { Migration20261123000000_search_fastupdate_off } from './Migration20261123000000_search_fastupdate_off.js';
import { Migration20261123120000_search_changes } from './Migration20261123120000_search_changes.js';
import { Migration20261125000000_access_changes } from './Migration20261125000000_access_changes.js';
import { Migration20261125000100_media_access } from './Migration20261125000100_media_access.js';
import { Migration20261125000200_milestone_positions_deferred } from './Migration20261125000200_milestone_positions_deferred.js';
import { Migration20261125030000_session_flash } from './Migration20261125030000_session_flash.js';
import { Migration20261126130000_media_attached } from './Migration20261126130000_media_attached.js';
import { Migration20261126120000_lines_repaired } from './Migration20261126120000_lines_repaired.js';
import { Migration20261126000000_array_null_text } from './Migration20261126000000_array_null_text.js';
import { Migration20261126180000_idempotency_account } from './Migration20261126180000_idempotency_account.js';
import { Migration20261126171820_known_devices } from './Migration20261126171820_known_devices.js';
import { Migration20261126185938_github_proof } from './Migration20261126185938_github_proof.js';
import { Migration20261126194926_github_proof_account_id } from './Migration20261126194926_github_proof_account_id.js';
import { Migration20261126203122_roadmap_walks } from './Migration20261126203122_roadmap_walks.js';
import { Migration20261126205455_roadmap_walks_project_index } from './Migration20261126205455_roadmap_walks_project_index.js';
import { Migration20261126233332_oauth } from './Migration20261126233332_oauth.js';
import { Migration20261127021127_webhooks } from './Migration20261127021127_webhooks.js';
import { Migration20261127051500_webhook_deliveries_wake_unqueued } from './Migration20261127051500_webhook_deliveries_wake_unqueued.js';
import { Migration20261127093806_api_key_replaced } from './Migration20261127093806_api_key_replaced.js';
import { Migration20261127120058_security_log } from './Migration20261127120058_security_log.js';
import { Migration20261127190000_webhook_events_wake_per_row } from './Migration20261127190000_webhook_events_wake_per_row.js';
import { Migration20261129030000_oauth_browser } from './Migration20261129030000_oauth_browser.js';
import { Migration20261129040000_webhook_sequence_per_subscription } from './Migration20261129040000_webhook_sequence_per_subscription.js';
import { Migration20261129050000_security_log_resource_name } from './Migration20261129050000_security_log_resource_name.js';
import { Migration20261129060000_trace_ids } from './Migration20261129060000_trace_ids.js';
import { Migration20261129070000_milestone_dates } from './Migration20261129070000_milestone_dates.js';
import { Migration20261129080000_roadmap_evidence } from './Migration20261129080000_roadmap_evidence.js';
import { Migration20261201072641_feed_marks } from './Migration20261201072641_feed_marks.js';

export const migrationsList = [
  { name: 'Migration20261122000000_core', class: Migration20261122000000_core },
  { name: 'Migration20261122162636_comments', class: Migration20261122162636_comments },
  { name: 'Migration20261122170000_search', class: Migration20261122170000_search },
  { name: 'Migration20261122171000_media', class: Migration20261122171000_media },
  { name: 'Migration20261122172000_post_media', class: Migration20261122172000_post_media },
  { name: 'Migration20261122172001_reactions', class: Migration20261122172001_reactions },
  { name: 'Migration20261122172002_user_avatar', class: Migration20261122172002_user_avatar },
  { name: 'Migration20261122172003_jobs_and_profiles', class: Migration20261122172003_jobs_and_profiles },
  { name: 'Migration20261122172004_github', class: Migration20261122172004_github },
  { name: 'Migration20261122172005_idempotency', class: Migration20261122172005_idempotency },
  { name: 'Migration20261122201111_sessions', class: Migration20261122201111_sessions },
  { name: 'Migration20261123000000_search_fastupdate_off', class: Migration20261123000000_search_fastupdate_off },
  { name: 'Migration20261123120000_search_changes', class: Migration20261123120000_search_changes },
  { name: 'Migration20261125000000_access_changes', class: Migration20261125000000_access_changes },
  { name: 'Migration20261125000100_media_access', class: Migration20261125000100_media_access },
  {
    name: 'Migration20261125000200_milestone_positions_deferred',
    class: Migration20261125000200_milestone_positions_deferred,
  },
  { name: 'Migration20261125030000_session_flash', class: Migration20261125030000_session_flash },
  { name: 'Migration20261126000000_array_null_text', class: Migration20261126000000_array_null_text },
  { name: 'Migration20261126120000_lines_repaired', class: Migration20261126120000_lines_repaired },
  { name: 'Migration20261126130000_media_attached', class: Migration20261126130000_media_attached },
  { name: 'Migration20261126171820_known_devices', class: Migration20261126171820_known_devices },
  {
    name: 'Migration20261126180000_idempotency_account',
    class: Migration20261126180000_idempotency_account,
  },
  { name: 'Migration20261126185938_github_proof', class: Migration20261126185938_github_proof },
  { name: 'Migration20261126194926_github_proof_account_id', class: Migration20261126194926_github_proof_account_id },
  { name: 'Migration20261126203122_roadmap_walks', class: Migration20261126203122_roadmap_walks },
  { name: 'Migration20261126205455_roadmap_walks_project_index', class: Migration20261126205455_roadmap_walks_project_index },
  { name: 'Migration20261126233332_oauth', class: Migration20261126233332_oauth },
  { name: 'Migration20261127021127_webhooks', class: Migration20261127021127_webhooks },
  { name: 'Migration20261127051500_webhook_deliveries_wake_unqueued', class: Migration20261127051500_webhook_deliveries_wake_unqueued },
  { name: 'Migration20261127093806_api_key_replaced', class: Migration20261127093806_api_key_replaced },
  { name: 'Migration20261127120058_security_log', class: Migration20261127120058_security_log },
  { name: 'Migration20261127190000_webhook_events_wake_per_row', class: Migration20261127190000_webhook_events_wake_per_row },
  { name: 'Migration20261129030000_oauth_browser', class: Migration20261129030000_oauth_browser },
  {
    name: 'Migration20261129040000_webhook_sequence_per_subscription',
    class: Migration20261129040000_webhook_sequence_per_subscription,
  },
  { name: 'Migration20261129050000_security_log_resource_name', class: Migration20261129050000_security_log_resource_name },
  { name: 'Migration20261129060000_trace_ids', class: Migration20261129060000_trace_ids },
  { name: 'Migration20261129070000_milestone_dates', class: Migration20261129070000_milestone_dates },
  { name: 'Migration20261129080000_roadmap_evidence', class: Migration20261129080000_roadmap_evidence },
  { name: 'Migration20261201072641_feed_marks', class: Migration20261201072641_feed_marks },
];
