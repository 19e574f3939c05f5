import type { HttpRequest, HttpResponse, TemplatedApp } from '../core/http/uws';
import type { Exchange } from '../core/http/exchange';
import { StreamingExchange } from '../core/http/stream-writer';
import { proxyErrorBody } from '../gateway/errors';
import type { AiProxy } from '../gateway/proxy';
import { GEMINI_PATHS, geminiRoute } from '../gateway/routes';
import { geminiModelOf } from '../gateway/formats/gemini';
import { modelLimits } from '../domain/pricing/estimate';
import { ApiError } from '../../contract/errors';

type Handler = (res: HttpResponse, req: HttpRequest) => void;

export interface GeminiRouteDeps {
  proxy: AiProxy;
  maxBodyBytes: number;
  /** Runs a handler on an Exchange, answering what it throws as the API does. */
  handle: (fn: (ex: Exchange) => void | Promise<void>) => Handler;
  /** The REST API's handler: what `/v1/models…` is when the call is not Google's. */
  rest: Handler;
  /** The models the caller may name (the dashboard's list) and its Owner's default output limit; throws ApiError for a refused key. */
  models: (ex: Exchange) => Promise<{ ids: string[]; defaultOutputLimit: number }>;
}

const JSON_TYPE = { 'content-type': 'application/json' };
const geminiError = (status: number, message: string, code: string) => proxyErrorBody('gemini', status, message, code);

/**
 * Gemini's API beside OpenAI's: `{prefix}{model}:{method}` calls go to the proxy (the model and
 * method read from the path, routes.ts), and the model list and model answer in Google's shape.
 * `/v1/models` is OpenAI's too: a call there is Google's only when it is a Gemini method, or
 * carries Google's credentials (x-goog-api-key or ?key=).
 */
export function registerGeminiRoutes(app: TemplatedApp, d: GeminiRouteDeps): void {
  for (const prefix of GEMINI_PATHS) {
    const googleOnly = prefix.startsWith('/v1beta/');
    app.post(`${prefix}*`, (res, req) => {
      const route = geminiRoute(req.getUrl(), req.getQuery() ?? '');
      // A path under `/v1/models/` that is no Gemini method gets the API's own 404.
      if (!route && !googleOnly) return d.rest(res, req);
      const ex = new StreamingExchange(res, req, d.maxBodyBytes, d.proxy.headerNames, geminiError);
      if (route) return d.proxy.serve(ex, route.endpoint, route.canonical, route.params);
      ex.send(404, JSON_TYPE, geminiError(404, 'This gateway serves models/{model}:generateContent, :streamGenerateContent, :countTokens, :embedContent and :batchEmbedContents', 'not_found'));
    });
  }
  const geminiModels = (one: boolean) => d.handle(async (ex) => {
    try {
      const { ids, defaultOutputLimit } = await d.models(ex);
      const model = (id: string) => geminiModelOf(id, modelLimits(id, defaultOutputLimit));
      if (!one) return ex.send(200, JSON_TYPE, JSON.stringify({ models: ids.map(model) }));
      const id = decodeURIComponent(ex.path.slice(ex.path.indexOf('/models/') + 8)).replace(/^models\//, '');
      if (!ids.includes(id)) return ex.send(404, JSON_TYPE, geminiError(404, `Model ${id} is not found or this account may not use it`, 'model_not_found'));
      ex.send(200, JSON_TYPE, JSON.stringify(model(id)));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      ex.send(err.status, JSON_TYPE, geminiError(err.status, err.message, err.apiCode));
    }
  });
  const googleCall = (req: HttpRequest) => req.getHeader('x-goog-api-key') !== '' || /(?:^|&)key=/.test(req.getQuery() ?? '');
  for (const [path, one] of [['/v1beta/models', false], ['/v1beta/models/*', true]] as const) app.get(path, geminiModels(one));
  for (const [path, one] of [['/v1/models', false], ['/v1/models/*', true]] as const) {
    const gemini = geminiModels(one);
    app.get(path, (res, req) => (googleCall(req) ? gemini(res, req) : d.rest(res, req)));
  }
}
