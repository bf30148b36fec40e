{
  "targets": [
    {
      "target_name": "malloc_trim",
      "sources": ["trim.c"]
    }
  ]
}
