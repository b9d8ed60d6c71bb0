import { API_BASE } from '../kernel/contract.js';
import type { Media as MediaDto } from '../../codegen/generated/api/types.gen.js';
import type { Media } from './media.entity.js';
import { presentUserSummary } from '../users/users.presenter.js';

export function presentMedia(m: Media): MediaDto {
  return {
    id: m.id,
    contentType: m.contentType,
    byteSize: m.byteSize,
    width: m.width,
    height: m.height,
    sha256: m.sha256,
    uploader: presentUserSummary(m.uploader),
    contentPath: `${API_BASE}/media/${m.id}/content`,
    createdAt: m.createdAt.toISOString(),
  };
}
