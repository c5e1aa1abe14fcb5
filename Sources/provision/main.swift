print("provision")
