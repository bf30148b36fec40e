/*
 * malloc_trim(0) for Flashbulb (see index.js). glibc keeps the blocks a thread freed in that
 * thread's arena; malloc_trim returns every arena's free pages to the system. Elsewhere (musl,
 * macOS) there is nothing to trim and trim() reports false.
 */
#include <node_api.h>
#include <stdbool.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

static napi_value Trim(napi_env env, napi_callback_info info) {
  (void)info;
  bool released = false;
#if defined(__GLIBC__)
  released = malloc_trim(0) == 1;
#endif
  napi_value out;
  napi_get_boolean(env, released, &out);
  return out;
}

static napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "trim", NAPI_AUTO_LENGTH, Trim, NULL, &fn);
  napi_set_named_property(env, exports, "trim", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
