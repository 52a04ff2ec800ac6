print("coffer")
