{
  "variables": {
    "ucx%": "<!(node scripts/has-ucx.mjs)"
  },
  "targets": [
    {
      "target_name": "ccjs_shm",
      "sources": ["native/shm.cc"],
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra"],
      "libraries": ["-lrt", "-lpthread"]
    },
    {
      "target_name": "ccjs_reduce",
      "sources": ["native/reduce.cc"],
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra"]
    },
    {
      "target_name": "ccjs_checksum",
      "sources": ["native/crc32c.cc"],
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra"]
    },
    {
      "target_name": "ccjs_ucx",
      "conditions": [
        ["ucx==1", {
          "sources": ["native/ucx.cc", "native/ucx-worker.cc"],
          "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"],
          "cflags_cc": ["-std=c++17", "-Wall", "-Wextra"],
          "libraries": ["-lucp", "-lucs"]
        }, {
          "type": "none"
        }]
      ]
    }
  ]
}
