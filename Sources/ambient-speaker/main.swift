print("ambient-speaker")
