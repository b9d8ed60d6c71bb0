import { enableCompileCache } from 'node:module'; enableCompileCache();
let t=performance.now(); const lap=(l)=>{console.error(l, (performance.now()-t).toFixed(0)); t=performance.now();};
const [{ ZxcvbnFactory }, common, en] = await Promise.all([import('@zxcvbn-ts/core'), import('@zxcvbn-ts/language-common'), import('@zxcvbn-ts/language-en')]); lap('import');
const d = { ...common.dictionary, ...en.dictionary }; lap('spread');
for (const [k,v] of Object.entries(d)) console.error(k, v.length);
const z = new ZxcvbnFactory({ dictionary: d, graphs: common.adjacencyGraphs, translations: en.translations }); lap('factory');
z.check('velvet quasar lantern 71 umbrella', ['a']); lap('check');
z.check('velvet quasar lantern 72 umbrella', ['a']); lap('check2');
