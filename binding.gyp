{
  "targets": [
    {
      "target_name": "ccjs_shm",
      "sources": ["native/shm.cc"],
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra"],
      "libraries": ["-lrt", "-lpthread"]
    }
  ]
}
