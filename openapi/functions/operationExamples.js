// An operation shows an example of its request body and of each success response with a body
// (raw bytes, `format: binary`, need none).
const hasExample = (media) =>
  media &&
  (media.example !== undefined ||
    (media.examples && Object.keys(media.examples).length > 0) ||
    media.schema?.format === 'binary');

export default (op) => {
  const results = [];
  for (const [type, media] of Object.entries(op?.requestBody?.content ?? {})) {
    if (!hasExample(media))
      results.push({ message: `the request body (${type}) has no example`, path: ['requestBody', 'content', type] });
  }
  let successes = 0;
  for (const [status, response] of Object.entries(op?.responses ?? {})) {
    if (!/^2/.test(status)) continue;
    successes += 1;
    for (const [type, media] of Object.entries(response?.content ?? {})) {
      if (!hasExample(media))
        results.push({
          message: `response ${status} (${type}) has no example`,
          path: ['responses', status, 'content', type],
        });
    }
  }
  if (successes === 0) results.push({ message: 'the operation documents no success response', path: ['responses'] });
  return results;
};
